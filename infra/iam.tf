# Least privilege, granted on the narrowest resource that works:
# topics, subscriptions, secrets, the queue and Cloud Run services rather
# than the project. Project-level grants are only roles with no finer
# resource (Firestore data access, build logs and images). tests/infra keeps
# every role on an allowlist.

# --- function identities: Firestore -----------------------------------------------

resource "google_project_iam_member" "approve" {
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.approve.member
}

resource "google_project_iam_member" "renew_watch" {
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.renew_watch.member
}

# --- function identities: secrets (node and ingest grants live in the module) --

resource "google_secret_manager_secret_iam_member" "approve" {
  for_each = local.gmail_secrets

  project   = var.project_id
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.approve.member
}

resource "google_secret_manager_secret_iam_member" "renew_watch" {
  for_each = local.gmail_secrets

  project   = var.project_id
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.renew_watch.member
}

# --- publishing envelopes --------------------------------------------------------

# A node publishes only to the topics of the nodes it routes to.
resource "google_pubsub_topic_iam_member" "node_publishes" {
  for_each = local.node_publish_grants

  project = var.project_id
  topic   = google_pubsub_topic.pushed[local.node_topic_names[each.value.topic]].name
  role    = "roles/pubsub.publisher"
  member  = module.node[each.value.function].service_account_member
}

# A node records input that is not an envelope at all on its dead-letter
# topic (ARCHITECTURE.md section 3, rule 6).
resource "google_pubsub_topic_iam_member" "node_dead_letters" {
  for_each = var.node_functions

  project = var.project_id
  topic   = google_pubsub_topic.dead_letter[each.key].name
  role    = "roles/pubsub.publisher"
  member  = module.node[each.key].service_account_member
}

# Ingest starts traces (and resumes waiting ones); approve resumes paused ones.
resource "google_pubsub_topic_iam_member" "ingest_publishes" {
  for_each = var.node_functions

  project = var.project_id
  topic   = google_pubsub_topic.pushed[each.key].name
  role    = "roles/pubsub.publisher"
  member  = module.ingest.service_account_member
}

resource "google_pubsub_topic_iam_member" "approve_publishes" {
  for_each = var.node_functions

  project = var.project_id
  topic   = google_pubsub_topic.pushed[each.key].name
  role    = "roles/pubsub.publisher"
  member  = google_service_account.approve.member
}

# --- Cloud Tasks -------------------------------------------------------------------

# Pausing nodes schedule the deadline task; approve re-schedules on escalation.
resource "google_cloud_tasks_queue_iam_member" "node_enqueuer" {
  for_each = var.node_functions

  project  = var.project_id
  location = var.region
  name     = google_cloud_tasks_queue.approvals.name
  role     = "roles/cloudtasks.enqueuer"
  member   = module.node[each.key].service_account_member
}

resource "google_cloud_tasks_queue_iam_member" "approve_enqueuer" {
  project  = var.project_id
  location = var.region
  name     = google_cloud_tasks_queue.approvals.name
  role     = "roles/cloudtasks.enqueuer"
  member   = google_service_account.approve.member
}

# Deleting a decided approval's timeout task is an optimisation only.
resource "google_cloud_tasks_queue_iam_member" "approve_task_deleter" {
  project  = var.project_id
  location = var.region
  name     = google_cloud_tasks_queue.approvals.name
  role     = "roles/cloudtasks.taskDeleter"
  member   = google_service_account.approve.member
}

# Creating a task with an OIDC token acts as the tasks identity.
resource "google_service_account_iam_member" "node_act_as_tasks_invoker" {
  for_each = var.node_functions

  service_account_id = google_service_account.tasks_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = module.node[each.key].service_account_member
}

resource "google_service_account_iam_member" "approve_act_as_tasks_invoker" {
  service_account_id = google_service_account.tasks_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = google_service_account.approve.member
}

# --- invokers, on the Cloud Run services under the functions ---------------------

# Public approval page: the reviewer token in the link is the credential.
resource "google_cloud_run_service_iam_member" "approve_public" {
  #checkov:skip=CKV_GCP_102:Public by design: the approval page authenticates each reviewer by the single-use token in the link, and a GET never changes state.
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.approve.service_config[0].service
  role     = "roles/run.invoker"
  member   = "allUsers"
}

# Deadline tasks carry an OIDC token of the tasks identity; the function
# checks it on its timeout endpoint.
resource "google_cloud_run_service_iam_member" "approve_tasks_invoker" {
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.approve.service_config[0].service
  role     = "roles/run.invoker"
  member   = google_service_account.tasks_invoker.member
}

resource "google_cloud_run_service_iam_member" "renew_watch_scheduler_invoker" {
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.renew_watch.service_config[0].service
  role     = "roles/run.invoker"
  member   = google_service_account.scheduler_invoker.member
}

# --- push identity -----------------------------------------------------------------

# Pub/Sub mints the push OIDC tokens as the push identity.
resource "google_service_account_iam_member" "pubsub_agent_token_creator" {
  service_account_id = google_service_account.pubsub_push.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = "serviceAccount:${local.pubsub_service_agent}"
}

# --- function build ----------------------------------------------------------------

resource "google_project_iam_member" "build" {
  for_each = toset([
    "roles/artifactregistry.writer", # push the function image to gcf-artifacts
    "roles/logging.logWriter",       # build logs
    "roles/storage.objectViewer",    # read the source archive
  ])

  project = var.project_id
  role    = each.value
  member  = google_service_account.build.member
}
