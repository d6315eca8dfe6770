"""instinct's test modules (all but test_instinct.py, which stays beside instinct.py).

`python3 -m unittest -v` from the repository root finds them; `interop/` holds the dev-only
scripts the interop and end-to-end tests drive (not unittest modules)."""
