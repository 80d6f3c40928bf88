"""Performance figures for shoectl (`make bench`). Figures, not pass/fail tests."""
