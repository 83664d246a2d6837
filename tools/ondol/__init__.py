"""ondol host CLI: build, boot and measure the ondol kernel under QEMU."""


class OndolError(Exception):
    """An expected failure, reported to the user as one line without a traceback."""
