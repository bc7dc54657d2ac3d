"""What `ruscope dashboard` (and the demo) tell the Streamlit process through its environment, read by
`dashboard.state`. Apart from it so that the command sets them without importing Streamlit."""

STORE_ENV = "RUSCOPE_STORE"  # the store named at start: --store, else the config's [store] uri
ANY_STORE_ENV = "RUSCOPE_ANY_STORE"  # "1": --allow-any-store (a visitor may type another store)
PRICING_ENV = "RUSCOPE_PRICING"  # the config's [pricing] as JSON (prices, reservations held; never a key or secret)
CHECK_REPORT_ENV = (
    "RUSCOPE_CHECK_REPORT"  # --check-report: a `ruscope check` JSON report or JUnit XML the Query costs page shows
)
