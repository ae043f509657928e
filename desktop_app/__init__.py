import logging

__version__ = "0.1.0"

# A library's loggers stay silent until a front end sets up the log file (logs.setup_logging); without this,
# Python's last-resort handler would print warnings to stderr, breaking the CLI's one-line errors.
logging.getLogger(__name__).addHandler(logging.NullHandler())
