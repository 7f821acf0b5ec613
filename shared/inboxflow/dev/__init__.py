"""Development tooling, left out of the deployed source archive: the ``inboxflow`` CLI,
the emulated cloud (``devcloud``, ``emulators``), and local doubles of the Google APIs."""
