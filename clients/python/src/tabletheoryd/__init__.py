# SPDX-License-Identifier: Apache-2.0
"""Python client of tabletheoryd, the DynamoDB ORM sidecar (standard library only)."""
from .client import Client, Model, Page, Transaction, request_id
from .errors import *  # noqa: F401,F403 -- one class per error code
from .errors import BY_CODE, TableTheoryError, TransportError
from .expr import Cond, Update, attr
from .ledger import Jobs, Lease, Outcome, default_owner

__version__ = "0.1.0"
__all__ = ["Client", "Model", "Page", "Transaction", "request_id", "Cond", "Update", "attr",
           "Jobs", "Lease", "Outcome", "default_owner", "TableTheoryError",
           "TransportError"] + sorted(BY_CODE)
