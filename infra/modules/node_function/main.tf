# One Pub/Sub-pushed Cloud Function (2nd gen): the function with its own
# identity (modules/http_function), the push subscription with OIDC, retry
# policy, ordering and dead-lettering, and the IAM those need. Used for
# every graph node and the Gmail ingest.

module "function" {
  source = "../http_function"

  project_id         = var.project_id
  region             = var.region
  function_name      = var.function_name
  description        = var.description
  service_account_id = var.service_account_id
  project_roles      = var.project_roles

  runtime               = var.runtime
  entry_point           = var.entry_point
  source_bucket         = var.source_bucket
  source_object         = var.source_object
  build_service_account = var.build_service_account
  docker_repository     = var.docker_repository

  memory_mb     = var.memory_mb
  timeout_s     = var.timeout_s
  max_instances = var.max_instances
  min_instances = var.min_instances

  ingress_settings             = "ALLOW_INTERNAL_ONLY" # Pub/Sub push in the same project is internal
  environment_variables        = var.environment_variables
  secret_environment_variables = var.secret_environment_variables
  labels                       = var.labels
  iam_propagation_wait         = var.iam_propagation_wait

  # Only the push identity may call a pushed function.
  invoker_members = { push = "serviceAccount:${var.push_service_account_email}" }
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
    push_endpoint = module.function.function_uri

    oidc_token {
      service_account_email = var.push_service_account_email
      audience              = module.function.function_uri
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

  # Pushing before the invoker grant exists would only produce 403 retries.
  depends_on = [module.function]
}

# Dead-lettering: the Pub/Sub service agent must be able to acknowledge the
# message here (subscriber) and publish it to the dead-letter topic
# (publisher, granted on the topic in the root module).
resource "google_pubsub_subscription_iam_member" "dead_letter_subscriber" {
  project      = var.project_id
  subscription = google_pubsub_subscription.push.name
  role         = "roles/pubsub.subscriber"
  member       = "serviceAccount:${var.pubsub_service_agent}"

  # A replaced subscription keeps its name, so this grant would look
  # unchanged and the new subscription would silently lose it (dead-lettering
  # then fails). Recreate it with the subscription, as terraform-google-pubsub
  # (main.tf, push_subscription_binding) does.
  lifecycle {
    replace_triggered_by = [google_pubsub_subscription.push]
  }
}
