"""AST expression -> Python closure `fn(row) -> value`, one closure per node, built once per query.

Rows and the compile-time context are described in `scope.py`. Hot shapes get
fused closures: a property path is one closure, and `path <op> constant` is one closure.
Parameters are substituted as constants at compile time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from . import ast as a
from .errors import UNVERIFIED, SqlError
from .functions import AGGREGATES, FUNCTIONS, PREDICATE_FUNCTIONS, TYPE_CHECK_FUNCTIONS
from .operators import BINARY, MIRROR, ORDER_TESTS, UNARY, like
from .patterns import like_pattern
from .scope import Context, Fn, Scope, constant, direct_key, getter, path_of, step
from .values import deep_equal, hash_key, rank

U = a.UNDEFINED


def compile_expr(node: Any, scope: Scope, ctx: Context) -> Fn:
    """Compile one expression node (and its children) into a closure."""
    is_const, value = constant(node, ctx)
    if is_const:
        return lambda r: value
    path = path_of(node, ctx)
    if path is not None:
        return getter(scope, *path)
    builder = _BUILDERS.get(type(node))
    if builder is None:
        raise SqlError("SC1001", f"Unsupported expression {type(node).__name__}.")
    return builder(node, scope, ctx)


def _c(node: Any, scope: Scope, ctx: Context) -> Fn:
    return compile_expr(node, scope, ctx)


def _index(node: a.Index, scope: Scope, ctx: Context) -> Fn:
    target, index = _c(node.target, scope, ctx), _c(node.index, scope, ctx)

    def fn(r: Any) -> Any:
        key = index(r)
        return step(target(r), key) if key.__class__ in (str, int) else U

    return fn


def _prop(node: a.Prop, scope: Scope, ctx: Context) -> Fn:
    target, key = _c(node.target, scope, ctx), node.name
    return lambda r: step(target(r), key)


def _unary(node: a.Unary, scope: Scope, ctx: Context) -> Fn:
    operand, op = _c(node.operand, scope, ctx), UNARY[node.op]
    return lambda r: op(operand(r))


def _and(left: Fn, right: Fn) -> Fn:
    def fn(r: Any) -> Any:
        x = left(r)
        if x is False:
            return False
        y = right(r)
        if y is False:
            return False
        return True if x is True and y is True else U

    return fn


def _or(left: Fn, right: Fn) -> Fn:
    def fn(r: Any) -> Any:
        x = left(r)
        if x is True:
            return True
        y = right(r)
        if y is True:
            return True
        return False if x is False and y is False else U

    return fn


def _binary(node: a.Binary, scope: Scope, ctx: Context) -> Fn:
    if node.op in ("AND", "OR"):
        left, right = _c(node.left, scope, ctx), _c(node.right, scope, ctx)
        return _and(left, right) if node.op == "AND" else _or(left, right)
    if node.op in ORDER_TESTS:
        fused = _compare_constant(node, scope, ctx)
        if fused is not None:
            return fused
    left, right, op = _c(node.left, scope, ctx), _c(node.right, scope, ctx), BINARY[node.op]
    return lambda r: op(left(r), right(r))


_PY_OPS = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


@functools.lru_cache(maxsize=64)
def _comparison_factory(op: str, direct: bool, numeric: bool) -> Callable[..., Fn]:
    """Build (once per shape) a factory of one-closure comparisons `path <op> constant`.

    The comparison is inlined in the closure's bytecode; a value of another type gives undefined.
    """
    access = "r.get(key, U)" if direct else "get(r)"
    check = (
        f"(c := (v := {access}).__class__) is int or c is float" if numeric else (f"(v := {access}).__class__ is kind")
    )
    source = f"def factory(get, key, k, kind, U):\n    return lambda r: (v {_PY_OPS[op]} k) if {check} else U\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<sql {op}>", "exec"), namespace)  # noqa: S102 - fixed template, no user text
    factory: Callable[..., Fn] = namespace["factory"]
    return factory


def _compare_constant(node: a.Binary, scope: Scope, ctx: Context) -> Fn | None:
    """`expr <op> constant` (either side) with a primitive constant: one closure, no dispatch."""
    op = node.op
    is_const, k = constant(node.right, ctx)
    other = node.left
    if not is_const:
        is_const, k = constant(node.left, ctx)
        other, op = node.right, MIRROR[op]
    if not is_const or rank(k) not in (1, 2, 3, 4) or (k is None and op not in ("=", "!=")):
        return None
    value = _c(other, scope, ctx)
    if k is None:
        result = op == "="
        return lambda r: result if value(r) is None else U
    path = path_of(other, ctx)
    key = direct_key(scope, path[1]) if path is not None else None
    numeric = k.__class__ in (int, float)
    factory = _comparison_factory(op, key is not None, numeric)
    return factory(value, key, k, k.__class__, U)


BOOLEAN_FUNCTIONS = TYPE_CHECK_FUNCTIONS | PREDICATE_FUNCTIONS | {"IS_FINITE_NUMBER", "IS_INTEGER"}


def is_boolean(node: Any) -> bool:
    """True when the expression can only be true, false or undefined (so truthiness == `is True`)."""
    if isinstance(node, a.Binary):
        return node.op in ("AND", "OR") or node.op in ORDER_TESTS
    if isinstance(node, (a.In, a.Like, a.Between, a.Exists)):
        return True
    if isinstance(node, a.Unary):
        return node.op == "NOT"
    if isinstance(node, a.Call):
        return node.name in BOOLEAN_FUNCTIONS and not node.udf
    if isinstance(node, a.Literal):
        return node.value is True or node.value is False
    return False


def _between(node: a.Between, scope: Scope, ctx: Context) -> Fn:
    x = node.value
    ge = _binary(a.Binary(">=", x, node.low), scope, ctx)
    le = _binary(a.Binary("<=", x, node.high), scope, ctx)
    both = _and(ge, le)
    if node.negated:
        return lambda r: UNARY["NOT"](both(r))
    return both


def _in(node: a.In, scope: Scope, ctx: Context) -> Fn:
    value = _c(node.value, scope, ctx)
    consts = [constant(item, ctx) for item in node.items]
    if all(ok for ok, _ in consts):
        keys = frozenset(hash_key(v) for _, v in consts if v is not U)

        def member(r: Any) -> Any:
            v = value(r)
            if v.__class__ is str:
                return v in keys
            return U if v is U else hash_key(v) in keys
    else:
        items = [_c(item, scope, ctx) for item in node.items]

        def member(r: Any) -> Any:
            v = value(r)
            return U if v is U else any(deep_equal(v, item(r)) for item in items)

    if node.negated:
        return lambda r: UNARY["NOT"](member(r))
    return member


def _like(node: a.Like, scope: Scope, ctx: Context) -> Fn:
    value, escape = _c(node.value, scope, ctx), node.escape
    is_const, pattern = constant(node.pattern, ctx)
    if is_const and pattern.__class__ is str:
        match = like_pattern(pattern, escape).matches
        test: Fn = lambda r: match(v) if (v := value(r)).__class__ is str else U  # noqa: E731
    else:
        pat = _c(node.pattern, scope, ctx)
        test = lambda r: like(value(r), pat(r), escape)  # noqa: E731
    if node.negated:
        return lambda r: UNARY["NOT"](test(r))
    return test


def _ternary(node: a.Ternary, scope: Scope, ctx: Context) -> Fn:
    cond, then, other = (_c(n, scope, ctx) for n in (node.cond, node.then, node.otherwise))
    return lambda r: then(r) if cond(r) is True else other(r)


def _coalesce(node: a.Coalesce, scope: Scope, ctx: Context) -> Fn:
    left, right = _c(node.left, scope, ctx), _c(node.right, scope, ctx)
    return lambda r: right(r) if (v := left(r)) is U else v


def _array(node: a.ArrayCtor, scope: Scope, ctx: Context) -> Fn:
    items = [_c(item, scope, ctx) for item in node.items]
    return lambda r: [v for item in items if (v := item(r)) is not U]


def _object(node: a.ObjectCtor, scope: Scope, ctx: Context) -> Fn:
    props = [(name, _c(expr, scope, ctx)) for name, expr in node.props]

    def build(r: Any) -> dict[str, Any]:
        out = {}
        for name, fn in props:
            v = fn(r)
            if v is not U:
                out[name] = v
        return out

    return build


def _call(node: a.Call, scope: Scope, ctx: Context) -> Fn:
    if node.name in AGGREGATES and not node.udf:
        if ctx.aggregate is None:
            raise SqlError(
                UNVERIFIED,
                f"Aggregate function '{node.spelled}' is only allowed in the select list.",
                *node.span,
            )
        return ctx.aggregate(node, scope)
    builtin = FUNCTIONS[node.name]
    impl, args = builtin.impl, [_c(arg, scope, ctx) for arg in node.args]
    if builtin.prepare is not None:  # constant arguments read once (a GeoJSON shape), not on every row
        prepare = builtin.prepare
        args = [_once(fn, prepare) if _is_constant_tree(arg, ctx) else fn for arg, fn in zip(node.args, args)]
    if not builtin.strict:
        return lambda r: impl(*[arg(r) for arg in args])
    if len(args) == 1:
        (a0,) = args
        return lambda r: U if (v := a0(r)) is U else impl(v)
    if len(args) == 2:
        a0, a1 = args
        return lambda r: U if (x := a0(r)) is U or (y := a1(r)) is U else impl(x, y)

    def call(r: Any) -> Any:
        values = [arg(r) for arg in args]
        return U if any(v is U for v in values) else impl(*values)

    return call


def _is_constant_tree(node: Any, ctx: Context) -> bool:
    """Whether an expression is a literal, a parameter, or an array or object built only of those."""
    if constant(node, ctx)[0]:
        return True
    if isinstance(node, a.ArrayCtor):
        return all(_is_constant_tree(item, ctx) for item in node.items)
    if isinstance(node, a.ObjectCtor):
        return all(_is_constant_tree(expr, ctx) for _, expr in node.props)
    return False


def _once(fn: Fn, prepare: Callable[[Any], Any]) -> Fn:
    value = prepare(fn(None))
    return lambda r: value


def _exists(node: a.Exists, scope: Scope, ctx: Context) -> Fn:
    run = ctx.subquery(node.query, scope)
    return lambda r: _nonempty(run(r))


def _nonempty(rows: Any) -> bool:
    for _ in rows:
        return True
    return False


def _array_subquery(node: a.ArraySubquery, scope: Scope, ctx: Context) -> Fn:
    run = ctx.subquery(node.query, scope)
    return lambda r: list(run(r))


def _scalar_subquery(node: a.ScalarSubquery, scope: Scope, ctx: Context) -> Fn:
    run = ctx.subquery(node.query, scope)

    def scalar(r: Any) -> Any:
        rows = list(run(r))
        if len(rows) > 1:
            raise SqlError(
                UNVERIFIED,
                "The cardinality of a scalar subquery result set cannot be greater than one.",
                *node.span,
            )
        return rows[0] if rows else U

    return scalar


_BUILDERS: dict[type, Callable[[Any, Scope, Context], Fn]] = {
    a.Index: _index,
    a.Prop: _prop,
    a.Unary: _unary,
    a.Binary: _binary,
    a.Between: _between,
    a.In: _in,
    a.Like: _like,
    a.Ternary: _ternary,
    a.Coalesce: _coalesce,
    a.ArrayCtor: _array,
    a.ObjectCtor: _object,
    a.Call: _call,
    a.Exists: _exists,
    a.ArraySubquery: _array_subquery,
    a.ScalarSubquery: _scalar_subquery,
}
