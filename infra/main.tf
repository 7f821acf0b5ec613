# Shared values. Everything that depends on the graphs comes from
# graph.auto.tfvars.json, written by `inboxflow infra export`.

data "google_project" "this" {
  project_id = var.project_id
}

locals {
  pubsub_service_agent = "service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"

  # Gen2 functions also answer on this deterministic URL, so every function
  # (the approval function included) can know it without a dependency cycle.
  approval_url = "https://${var.region}-${var.project_id}.cloudfunctions.net/${var.service_functions["approve"].function_name}"

  # Environment every function reads (see ARCHITECTURE.md section 6).
  runtime_environment = {
    GOOGLE_CLOUD_PROJECT   = var.project_id
    INBOXFLOW_STORE        = "firestore"
    INBOXFLOW_BUS          = "pubsub"
    INBOXFLOW_TASKS        = "cloudtasks"
    INBOXFLOW_REGION       = var.region
    INBOXFLOW_APPROVAL_URL = local.approval_url
    INBOXFLOW_TASKS_QUEUE  = google_cloud_tasks_queue.approvals.name
    INBOXFLOW_TASKS_SA     = google_service_account.tasks_invoker.email
  }

  # Secret Manager secrets exposed as environment variables, by function kind.
  node_secrets = {
    GEMINI_API_KEY    = google_secret_manager_secret.runtime["GEMINI_API_KEY"].secret_id
    GMAIL_CREDENTIALS = google_secret_manager_secret.runtime["GMAIL_CREDENTIALS"].secret_id
  }
  gmail_secrets = {
    GMAIL_CREDENTIALS = google_secret_manager_secret.runtime["GMAIL_CREDENTIALS"].secret_id
  }

  # Every Pub/Sub-pushed function: the graph nodes plus the Gmail ingest.
  pushed_functions = merge(
    { for key, node in var.node_functions : key => {
      topic             = node.topic
      dead_letter_topic = node.dead_letter_topic
    } },
    { ingest = {
      topic             = var.service_functions["ingest"].topic
      dead_letter_topic = var.service_functions["ingest"].dead_letter_topic
    } },
  )

  # (publisher key, topic name) pairs: each node may publish only to the
  # nodes it routes to; ingest and approve start or resume any node.
  node_publish_grants = merge([
    for key, node in var.node_functions : {
      for topic in node.publishes_to : "${key}>${topic}" => { function = key, topic = topic }
    }
  ]...)
  node_topic_names = { for key, node in var.node_functions : node.topic => key }
}
