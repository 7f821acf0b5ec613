"""Personal data: find, export and erase everything held about one email address.

Driven by the declarations in ``schema.py`` (each collection's ``PersonalData``):
``matching`` says whether a document is about a person and redacts it,
``finder`` walks every declared collection through the documents and vector
ports, ``access`` writes what was found as one access-request document, and
``erasure`` deletes or redacts it, resumably, leaving an erasure record.
"""
