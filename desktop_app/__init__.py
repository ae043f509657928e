import logging
import os

__version__ = "0.1.0"

# A library's loggers stay silent until a front end sets up the log file (logs.setup_logging); without this,
# Python's last-resort handler would print warnings to stderr, breaking the CLI's one-line errors.
logging.getLogger(__name__).addHandler(logging.NullHandler())

# Nothing leaves the machine, libraries included: ONNX Runtime (1.32) has a telemetry client that otherwise
# writes a device id and an event store under ~/.cache/Microsoft/DeveloperTools on first use. Set here, before
# any module imports onnxruntime, for every front end (the window, the CLI, the MCP server, the bundle).
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
