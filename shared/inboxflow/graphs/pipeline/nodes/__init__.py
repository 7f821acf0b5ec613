"""One module per node of the email pipeline; each reads like a row of the node table."""
