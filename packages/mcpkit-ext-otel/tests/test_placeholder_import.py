"""The package imports with only mcpkit-core and opentelemetry-api installed."""


def test_package_imports() -> None:
    import mcpkit.ext.otel

    assert mcpkit.ext.otel.__doc__ is not None
