# One Pub/Sub-pushed Cloud Function (2nd gen): its identity, the function,
# the push subscription with OIDC, retry policy, ordering and dead-lettering,
# and the IAM those need. Used for every graph node and the Gmail ingest.

resource "google_service_account" "function" {
  project      = var.project_id
  account_id   = var.service_account_id
  display_name = "inboxflow ${var.function_name}"
  description  = "Identity of the ${var.function_name} function."
}

resource "google_project_iam_member" "function" {
  for_each = var.project_roles

  project = var.project_id
  role    = each.value
  member  = google_service_account.function.member
}

# Accessor on each secret, not on the project's secrets at large.
resource "google_secret_manager_secret_iam_member" "function" {
  for_each = var.secret_environment_variables

  project   = var.project_id
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.function.member
}

resource "google_cloudfunctions2_function" "function" {
  project     = var.project_id
  location    = var.region
  name        = var.function_name
  description = var.description
  labels      = var.labels

  build_config {
    runtime         = var.runtime
    entry_point     = var.entry_point
    service_account = var.build_service_account

    source {
      storage_source {
        bucket = var.source_bucket
        object = var.source_object
      }
    }
  }

  service_config {
    available_memory                 = "${var.memory_mb}Mi"
    timeout_seconds                  = var.timeout_s
    max_instance_count               = var.max_instances
    min_instance_count               = var.min_instances
    max_instance_request_concurrency = 1
    ingress_settings                 = var.ingress_settings
    all_traffic_on_latest_revision   = true
    service_account_email            = google_service_account.function.email
    environment_variables            = var.environment_variables

    dynamic "secret_environment_variables" {
      for_each = var.secret_environment_variables
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }
  }

  # The function cannot start without its secrets and roles.
  depends_on = [
    google_secret_manager_secret_iam_member.function,
    google_project_iam_member.function,
  ]
}

# Invoker on the underlying Cloud Run service, not on the function resource:
# push requests go to the run.app URL and Cloud Run checks this binding.
resource "google_cloud_run_service_iam_member" "push_invoker" {
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.function.service_config[0].service
  role     = "roles/run.invoker"
  member   = "serviceAccount:${var.push_service_account_email}"
}

resource "google_pubsub_subscription" "push" {
  project = var.project_id
  name    = var.subscription_name
  topic   = var.topic_id
  labels  = var.labels

  # For push, the ack deadline is the request timeout (max 600 s).
  ack_deadline_seconds       = min(600, max(10, var.timeout_s))
  message_retention_duration = "604800s"
  enable_message_ordering    = true

  push_config {
    push_endpoint = google_cloudfunctions2_function.function.service_config[0].uri

    oidc_token {
      service_account_email = var.push_service_account_email
      audience              = google_cloudfunctions2_function.function.service_config[0].uri
    }
  }

  retry_policy {
    minimum_backoff = var.minimum_backoff
    maximum_backoff = var.maximum_backoff
  }

  dead_letter_policy {
    dead_letter_topic     = var.dead_letter_topic_id
    max_delivery_attempts = var.max_delivery_attempts
  }

  expiration_policy {
    ttl = "" # never expire, however quiet the node is
  }

  depends_on = [google_cloud_run_service_iam_member.push_invoker]
}

# Dead-lettering: the Pub/Sub service agent must be able to acknowledge the
# message here (subscriber) and publish it to the dead-letter topic
# (publisher, granted on the topic in the root module).
resource "google_pubsub_subscription_iam_member" "dead_letter_subscriber" {
  project      = var.project_id
  subscription = google_pubsub_subscription.push.name
  role         = "roles/pubsub.subscriber"
  member       = "serviceAccount:${var.pubsub_service_agent}"
}
