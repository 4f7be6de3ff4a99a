"""Webhook delivery tests (helpers: ``hookkit``, ``procs``, ``replica``)."""
