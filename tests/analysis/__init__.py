"""Tests of the pure analysis functions, on frames built in the tests."""
