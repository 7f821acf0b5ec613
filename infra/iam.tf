# Least privilege, granted on the narrowest resource that works: topics,
# secrets, the queue, the tasks identity and Cloud Run services rather than
# the project. Project-level grants are only roles with no finer resource
# (Firestore data access, build logs and images). Each function's own
# Firestore role, secrets and invokers are granted by its module.
# tests/infra keeps every role on an allowlist.
#
#   function        publishes to                 Cloud Tasks          secrets
#   node            the nodes it routes to       pausing nodes only   Gemini key if uses_llm
#                                                                     and llm = gemini_api,
#                                                                     Gmail if uses_gmail
#   ingest          entry topics, shared DLQ     -                    Gmail
#   approve         resume topics                enqueuer + actAs     Gmail
#   renew_watch     -                            -                    Gmail

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
# topic (docs/architecture.md §5, errors).
resource "google_pubsub_topic_iam_member" "node_dead_letters" {
  for_each = var.node_functions

  project = var.project_id
  topic   = google_pubsub_topic.dead_letter[each.key].name
  role    = "roles/pubsub.publisher"
  member  = module.node[each.key].service_account_member
}

# Ingest starts traces at the entry node of a mailbox's graph.
resource "google_pubsub_topic_iam_member" "ingest_publishes" {
  for_each = toset(var.entry_topics)

  project = var.project_id
  topic   = google_pubsub_topic.pushed[local.node_topic_names[each.value]].name
  role    = "roles/pubsub.publisher"
  member  = module.ingest.service_account_member
}

# Ingest also resumes paused traces (a customer's reply in a waiting thread, a reviewer's
# decision by email reply): at the nodes a pause resumes, like approve.
resource "google_pubsub_topic_iam_member" "ingest_resumes" {
  for_each = toset(var.resume_topics)

  project = var.project_id
  topic   = google_pubsub_topic.pushed[local.node_topic_names[each.value]].name
  role    = "roles/pubsub.publisher"
  member  = module.ingest.service_account_member
}

# Ingest serves no node: what it cannot read goes to the shared dead-letter topic.
resource "google_pubsub_topic_iam_member" "ingest_dead_letters" {
  project = var.project_id
  topic   = google_pubsub_topic.shared_dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = module.ingest.service_account_member
}

# Approve resumes paused traces: only at the nodes a pause resumes.
resource "google_pubsub_topic_iam_member" "approve_publishes" {
  for_each = toset(var.resume_topics)

  project = var.project_id
  topic   = google_pubsub_topic.pushed[local.node_topic_names[each.value]].name
  role    = "roles/pubsub.publisher"
  member  = module.approve.service_account_member
}

# --- Cloud Tasks -------------------------------------------------------------------

# Pausing nodes schedule the deadline task; approve re-schedules on escalation
# and deletes a decided approval's task once its resume is published (an
# optimisation: a task not deleted finds the approval decided).
resource "google_cloud_tasks_queue_iam_member" "node_enqueuer" {
  for_each = local.pausing_nodes

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
  member   = module.approve.service_account_member
}

resource "google_cloud_tasks_queue_iam_member" "approve_task_deleter" {
  project  = var.project_id
  location = var.region
  name     = google_cloud_tasks_queue.approvals.name
  role     = "roles/cloudtasks.taskDeleter"
  member   = module.approve.service_account_member
}

# Creating a task with an OIDC token acts as the tasks identity.
resource "google_service_account_iam_member" "node_act_as_tasks_invoker" {
  for_each = local.pausing_nodes

  service_account_id = google_service_account.tasks_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = module.node[each.key].service_account_member
}

resource "google_service_account_iam_member" "approve_act_as_tasks_invoker" {
  service_account_id = google_service_account.tasks_invoker.name
  role               = "roles/iam.serviceAccountUser"
  member             = module.approve.service_account_member
}

# --- invokers, on the Cloud Run services under the functions ---------------------

# Public approval page: the reviewer token in the link is the credential.
# This also admits the deadline tasks; the function checks their OIDC token
# (issuer Google, audience INBOXFLOW_TASKS_AUDIENCE, email of the tasks
# identity) itself, so the tasks identity needs no invoker grant here (with
# approval_access = "none" it gets one: approve_tasks_invoker below).
# approval_access chooses how (docs/deploy.md, Organizations): allUsers here;
# or, where domain-restricted sharing refuses allUsers, no grant and Cloud
# Run's invoker IAM check disabled by the build (cloudbuild.yaml,
# approval-access: the provider has no such argument on 2nd-gen functions,
# hashicorp/terraform-provider-google#23360); or nothing public at all.
resource "google_cloud_run_service_iam_member" "approve_public" {
  #checkov:skip=CKV_GCP_102:Public by design: the approval page authenticates each reviewer by the single-use token in the link, and a GET never changes state.
  count = var.approval_access == "all_users" ? 1 : 0

  project  = var.project_id
  location = var.region
  service  = module.approve.service_name
  role     = "roles/run.invoker"
  member   = "allUsers"
}

# approval_access = "none": nothing public, so Cloud Run checks every call's
# token. The deadline tasks (POST /timeout) and the digest job (POST /digest)
# call the service's own URL (main.tf, tasks_url) as the tasks identity,
# which needs the invoker role there; the function still verifies the token
# itself (INBOXFLOW_TASKS_VERIFY). The other modes admit them without it.
resource "google_cloud_run_service_iam_member" "approve_tasks_invoker" {
  count = var.approval_access == "none" ? 1 : 0

  project  = var.project_id
  location = var.region
  service  = module.approve.service_name
  role     = "roles/run.invoker"
  member   = google_service_account.tasks_invoker.member
}

# --- push identity -----------------------------------------------------------------

# Pub/Sub mints the push OIDC tokens as the push identity. Projects created
# after April 8, 2021 need no grant for it (the service agent's own role
# covers it: cloud.google.com/pubsub/docs/authenticate-push-subscriptions),
# so none is made here: one grant fewer to a principal outside the
# customer's domain. Older projects: docs/deploy.md, Organizations.

# --- function build ----------------------------------------------------------------

# The functions' build_config.service_account. Checked against Google's
# "Custom Service Account for Cloud Build" page for Cloud Run functions
# (cloud.google.com/functions/docs/securing/build-custom-sa): Logs Writer,
# Artifact Registry Writer and Storage Object Viewer. Google suggests
# roles/cloudbuild.builds.builder only as the quick fix of granting the
# default Compute Engine account; it is far broader (all Cloud Build, bucket
# and image access) and is not granted here. Cloud Run's newer page for
# `gcloud run deploy --function` (run/docs/configuring/services/build-service-account)
# names roles/run.builder instead; these functions go through the Cloud
# Functions v2 API, which the three roles below cover.
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

# --- Gmail domain-wide delegation without a key --------------------------------------

# With gmail_keyless_delegation, every function that reads the Gmail secret
# signs the delegate's JWTs (sub = the mailbox) through the IAM Credentials
# signJwt method, which needs iam.serviceAccounts.signJwt on the delegate:
# Token Creator on that one account (google-auth's impersonated credentials
# with a subject; docs/deploy.md, Connecting a mailbox).
resource "google_service_account_iam_member" "gmail_delegate_signers" {
  for_each = local.gmail_delegation_signers

  service_account_id = google_service_account.gmail_delegate[0].name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = each.value
}

# --- Vertex AI (llm = "vertex") ------------------------------------------------------

# The nodes that call the LLM call Gemini on Vertex AI as their own identity:
# no key exists. Vertex has no finer resource for a publisher model than the
# project; the deployer's conditioned Project IAM Admin may grant this role
# (infra/bootstrap, grantable_project_roles).
resource "google_project_iam_member" "vertex_users" {
  for_each = local.vertex_users

  project = var.project_id
  role    = "roles/aiplatform.user"
  member  = each.value

  depends_on = [google_project_service.enabled]
}

# --- Per-mailbox OAuth tokens (inboxflow mailbox connect) ---------------------------

# Every function acting as a mailbox reads the mailboxes' own tokens, and only
# them: the grant holds for secrets named inboxflow-mailbox-* (main.tf,
# mailbox_token_prefix). IAM evaluates a secret's resource.name with the
# project NUMBER (projects/123/secrets/S), never the project id; a version's
# name (.../versions/V) starts with its secret's. The secrets are created by
# connect, not here, so the grant is on the project, conditioned on the name;
# the deployer's conditioned Project IAM Admin may grant this role
# (infra/bootstrap, grantable_project_roles).
resource "google_project_iam_member" "mailbox_token_readers" {
  for_each = local.gmail_functions

  project = var.project_id
  role    = "roles/secretmanager.secretAccessor"
  member  = each.value

  condition {
    title       = "inboxflow-mailbox-tokens"
    description = "Only the per-mailbox OAuth tokens that inboxflow mailbox connect stores."
    expression  = "resource.name.startsWith(\"projects/${data.google_project.this.number}/secrets/${local.mailbox_token_prefix}\")"
  }

  depends_on = [google_project_service.enabled]
}
