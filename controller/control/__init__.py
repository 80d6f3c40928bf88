"""Operators' access to a running table: the control socket server and its client."""
