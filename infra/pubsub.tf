# Topics: one per graph node (names from inboxflow.naming via the export),
# the Gmail topic users.watch publishes to, a dead-letter topic for each
# pushed function, and the shared dead-letter topic for messages no node can
# be named for. Every dead-letter topic has a pull subscription so dead
# letters are kept and queryable (`gcloud pubsub subscriptions pull <name>-sub`).

resource "google_pubsub_topic" "pushed" {
  #checkov:skip=CKV_GCP_83:Messages carry only envelope ids (trace_id, graph, node, step) or Gmail's {emailAddress, historyId}; mail content stays in Firestore. Google-managed encryption is enough and avoids a KMS key per environment.
  for_each = local.pushed_functions

  project = var.project_id
  name    = each.value.topic

  message_retention_duration = "86400s"

  depends_on = [google_project_service.enabled]
}

resource "google_pubsub_topic" "dead_letter" {
  #checkov:skip=CKV_GCP_83:Dead letters are the same envelopes as the node topics (ids only, no mail content); Google-managed encryption is enough.
  for_each = local.pushed_functions

  project = var.project_id
  name    = each.value.dead_letter_topic

  depends_on = [google_project_service.enabled]
}

resource "google_pubsub_subscription" "dead_letter" {
  for_each = local.pushed_functions

  project = var.project_id
  name    = "${each.value.dead_letter_topic}-sub"
  topic   = google_pubsub_topic.dead_letter[each.key].id

  ack_deadline_seconds       = 60
  message_retention_duration = var.dead_letter_retention
  retain_acked_messages      = true

  expiration_policy {
    ttl = ""
  }
}

resource "google_pubsub_topic" "shared_dead_letter" {
  #checkov:skip=CKV_GCP_83:Holds messages that did not decode as envelopes; only inboxflow identities and Gmail may publish to inboxflow topics and mail content never travels on them, so Google-managed encryption is enough.
  project = var.project_id
  name    = var.shared_dead_letter_topic

  depends_on = [google_project_service.enabled]
}

resource "google_pubsub_subscription" "shared_dead_letter" {
  project = var.project_id
  name    = "${var.shared_dead_letter_topic}-sub"
  topic   = google_pubsub_topic.shared_dead_letter.id

  ack_deadline_seconds       = 60
  message_retention_duration = var.dead_letter_retention
  retain_acked_messages      = true

  expiration_policy {
    ttl = ""
  }
}

# Dead-lettering publishes as the Pub/Sub service agent.
resource "google_pubsub_topic_iam_member" "dead_letter_publisher" {
  for_each = local.pushed_functions

  project = var.project_id
  topic   = google_pubsub_topic.dead_letter[each.key].name
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:${local.pubsub_service_agent}"

  # A replaced topic keeps its name, so Terraform would see no change here
  # and the new topic would lack the grant (as terraform-google-pubsub does).
  lifecycle {
    replace_triggered_by = [google_pubsub_topic.dead_letter[each.key]]
  }
}

# Gmail's push service publishes mailbox notifications to the Gmail topic.
# Domain-restricted sharing refuses this principal until the organization
# makes an exception for it (developers.google.com/workspace/gmail/api/guides/push;
# docs/deploy.md, Organizations); gmail_push_grant = false leaves it out.
resource "google_pubsub_topic_iam_member" "gmail_push_publisher" {
  count = var.gmail_push_grant ? 1 : 0

  project = var.project_id
  topic   = google_pubsub_topic.pushed["ingest"].name
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:gmail-api-push@system.gserviceaccount.com"
}
