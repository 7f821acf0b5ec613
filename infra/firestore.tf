# Checkpoints, step logs, approvals and their tokens, effects, failures,
# mailboxes, mail claims, threads, the KB chunks and email vectors
# (docs/architecture.md §5-§7, §10). The lists below come from
# inboxflow.infra_export (TTL_COLLECTIONS, COMPOSITE_INDEXES, VECTOR_INDEXES,
# INDEX_EXEMPTIONS), so code and infra agree.

resource "google_firestore_database" "default" {
  project     = var.project_id
  name        = "(default)"
  location_id = local.firestore_location # main.tf: derived from region unless set
  type        = "FIRESTORE_NATIVE"

  # The step protocol commits in transactions preconditioned on the step.
  concurrency_mode                  = "PESSIMISTIC"
  app_engine_integration_mode       = "DISABLED"
  point_in_time_recovery_enablement = "POINT_IN_TIME_RECOVERY_ENABLED"
  delete_protection_state           = var.firestore_deletion_protection ? "DELETE_PROTECTION_ENABLED" : "DELETE_PROTECTION_DISABLED"
  deletion_policy                   = var.firestore_deletion_protection ? "ABANDON" : "DELETE"

  depends_on = [google_project_service.enabled]
}

# Functions in one continent and the database in another put an ocean in
# every step's checkpoint round trips: say so at plan time (a warning; the
# location of an existing database cannot change).
check "firestore_near_functions" {
  assert {
    condition     = local.firestore_near_functions
    error_message = "firestore_location ${local.firestore_location} is far from region ${var.region}: every step pays the round trips. Leave firestore_location empty to derive it from region (before the database exists)."
  }
}

# TTL on expire_at. The policy applies per collection group ("steps" covers
# traces/{trace_id}/steps). The timestamp is exempt from indexing: it only
# grows, which would hotspot an index, and nothing queries it.
resource "google_firestore_field" "expire_at" {
  for_each = toset(var.firestore_ttl_collections)

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = each.value
  field      = "expire_at"

  ttl_config {}

  index_config {}
}

# Large or nested fields nobody filters on: no single-field indexes.
resource "google_firestore_field" "not_indexed" {
  for_each = { for item in var.firestore_index_exemptions : "${item.collection}.${item.field}" => item }

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = each.value.collection
  field      = each.value.field

  index_config {}
}

resource "google_firestore_index" "composite" {
  for_each = {
    for index in var.firestore_composite_indexes :
    "${index.collection}:${join(",", [for field in index.fields : "${field.field_path}:${coalesce(field.order, field.array_config)}"])}" => index
  }

  project     = var.project_id
  database    = google_firestore_database.default.name
  collection  = each.value.collection
  query_scope = "COLLECTION"

  # Each field is ordered (ASCENDING/DESCENDING) or array-contains (CONTAINS);
  # the other attribute is null, which leaves it unset.
  dynamic "fields" {
    for_each = each.value.fields
    content {
      field_path   = fields.value.field_path
      order        = fields.value.order
      array_config = fields.value.array_config
    }
  }
}

# Retrieval: find_nearest over kb_chunks.embedding and email_vectors.embedding.
# A flat index searches exhaustively; the distance measure (cosine) is chosen
# by each query, not by the index.
resource "google_firestore_index" "vector" {
  # Keyed by the prefix fields too: kb_chunks has one index per filter set on the same vector.
  for_each = { for index in var.firestore_vector_indexes : "${index.collection}.${join(".", index.prefix_fields)}.${index.field_path}" => index }

  project     = var.project_id
  database    = google_firestore_database.default.name
  collection  = each.value.collection
  query_scope = "COLLECTION"

  # Equality pre-filters (the embedder that made the vectors) come first.
  dynamic "fields" {
    for_each = each.value.prefix_fields
    content {
      field_path = fields.value
      order      = "ASCENDING"
    }
  }

  # Firestore stores __name__ ahead of the vector field; declaring it keeps
  # the plan free of a perpetual diff.
  fields {
    field_path = "__name__"
    order      = "ASCENDING"
  }

  fields {
    field_path = each.value.field_path

    vector_config {
      dimension = each.value.dimension
      flat {}
    }
  }
}
