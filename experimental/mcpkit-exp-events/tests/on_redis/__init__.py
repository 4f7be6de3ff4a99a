"""Tests against a real redis-server: the Redis store, two replicas, the soak."""
