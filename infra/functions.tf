# Every function is built from the same source archive (storage.tf) and runs
# as its own service account (created by the modules).

module "node" {
  source   = "./modules/node_function"
  for_each = var.node_functions

  project_id         = var.project_id
  region             = var.region
  function_name      = each.value.function_name
  description        = "inboxflow node ${each.key}"
  service_account_id = each.value.service_account_id
  project_roles      = ["roles/datastore.user", "roles/cloudtrace.agent"] # Firestore; spans to Cloud Trace

  runtime               = var.runtime
  entry_point           = each.value.entry_point
  source_bucket         = google_storage_bucket.source.name
  source_object         = google_storage_bucket_object.source.name
  build_service_account = google_service_account.build.id
  docker_repository     = google_artifact_registry_repository.functions.id
  iam_propagation_wait  = var.iam_propagation_wait

  memory_mb     = each.value.memory_mb
  timeout_s     = each.value.timeout_s
  max_instances = each.value.max_instances
  min_instances = each.value.min_instances

  environment_variables = merge(
    local.base_environment,
    local.node_llm_environment[each.key],
    local.node_task_environment[each.key],
    local.node_quoting_environment[each.key],
    local.node_mailbox_token_environment[each.key],
    { INBOXFLOW_NODE = each.key },
  )
  secret_environment_variables = local.node_secrets[each.key]
  labels = {
    inboxflow-graph = replace(each.value.graph, "_", "-")
    inboxflow-node  = replace(each.value.node, "_", "-")
  }

  topic_id              = google_pubsub_topic.pushed[each.key].id
  subscription_name     = each.value.subscription
  dead_letter_topic_id  = google_pubsub_topic.dead_letter[each.key].id
  max_delivery_attempts = var.max_delivery_attempts
  minimum_backoff       = var.push_minimum_backoff
  maximum_backoff       = var.push_maximum_backoff

  push_service_account_email = google_service_account.pubsub_push.email
  pubsub_service_agent       = local.pubsub_service_agent

  depends_on = [
    google_project_service.enabled,
    google_project_iam_member.build,
  ]
}

# Gmail ingest: pushed from the Gmail topic like a node (entry point `ingest`).
module "ingest" {
  source = "./modules/node_function"

  project_id         = var.project_id
  region             = var.region
  function_name      = var.service_functions["ingest"].function_name
  description        = "inboxflow Gmail ingest: history since the cursor, one trace per message"
  service_account_id = var.service_functions["ingest"].service_account_id
  project_roles      = ["roles/datastore.user", "roles/cloudtrace.agent"] # Firestore; spans to Cloud Trace

  runtime               = var.runtime
  entry_point           = var.service_functions["ingest"].entry_point
  source_bucket         = google_storage_bucket.source.name
  source_object         = google_storage_bucket_object.source.name
  build_service_account = google_service_account.build.id
  docker_repository     = google_artifact_registry_repository.functions.id
  iam_propagation_wait  = var.iam_propagation_wait

  memory_mb     = var.service_functions["ingest"].memory_mb
  timeout_s     = var.service_functions["ingest"].timeout_s
  max_instances = var.service_functions["ingest"].max_instances
  min_instances = var.service_functions["ingest"].min_instances

  environment_variables        = merge(local.base_environment, local.mailbox_token_environment)
  secret_environment_variables = local.gmail_secret

  topic_id              = google_pubsub_topic.pushed["ingest"].id
  subscription_name     = var.service_functions["ingest"].subscription
  dead_letter_topic_id  = google_pubsub_topic.dead_letter["ingest"].id
  max_delivery_attempts = var.max_delivery_attempts
  minimum_backoff       = var.push_minimum_backoff
  maximum_backoff       = var.push_maximum_backoff

  push_service_account_email = google_service_account.pubsub_push.email
  pubsub_service_agent       = local.pubsub_service_agent

  depends_on = [
    google_project_service.enabled,
    google_project_iam_member.build,
  ]
}

# Approval: public HTTP (ingress ALLOW_ALL, allUsers invoker in iam.tf).
# The credential is the single-use reviewer token in the link; a GET never
# changes state. Cloud Tasks calls POST /timeout with an OIDC token of the
# tasks identity, which the function verifies itself (the service is public).
module "approve" {
  #checkov:skip=CKV_GCP_124:Reviewers open approval links from their mail clients on the internet; the single-use, hashed, deadline-bound token in the link is the credential (docs/architecture.md §6).
  source = "./modules/http_function"

  project_id         = var.project_id
  region             = var.region
  function_name      = var.service_functions["approve"].function_name
  description        = "inboxflow approval page, decisions, timeouts and JSON API"
  service_account_id = var.service_functions["approve"].service_account_id
  project_roles      = ["roles/datastore.user", "roles/cloudtrace.agent"] # Firestore; spans to Cloud Trace

  runtime               = var.runtime
  entry_point           = var.service_functions["approve"].entry_point
  source_bucket         = google_storage_bucket.source.name
  source_object         = google_storage_bucket_object.source.name
  build_service_account = google_service_account.build.id
  docker_repository     = google_artifact_registry_repository.functions.id
  iam_propagation_wait  = var.iam_propagation_wait

  memory_mb     = var.service_functions["approve"].memory_mb
  timeout_s     = var.service_functions["approve"].timeout_s
  max_instances = var.service_functions["approve"].max_instances
  min_instances = var.service_functions["approve"].min_instances

  ingress_settings = "ALLOW_ALL"
  environment_variables = merge(local.base_environment, local.tasks_environment, local.mailbox_token_environment, {
    INBOXFLOW_TASKS_VERIFY = "true" # check the deadline tasks' OIDC token (approvals/app.py)
  })
  secret_environment_variables = local.approve_secrets # Gmail, and SES for escalations (ses.tf)

  depends_on = [
    google_project_service.enabled,
    google_project_iam_member.build,
  ]
}

# Renew-watch: HTTP behind IAM; only the Cloud Scheduler identity may invoke.
module "renew_watch" {
  source = "./modules/http_function"

  project_id         = var.project_id
  region             = var.region
  function_name      = var.service_functions["renew_watch"].function_name
  description        = "inboxflow daily Gmail users.watch renewal"
  service_account_id = var.service_functions["renew_watch"].service_account_id
  project_roles      = ["roles/datastore.user", "roles/cloudtrace.agent"] # Firestore; spans to Cloud Trace

  runtime               = var.runtime
  entry_point           = var.service_functions["renew_watch"].entry_point
  source_bucket         = google_storage_bucket.source.name
  source_object         = google_storage_bucket_object.source.name
  build_service_account = google_service_account.build.id
  docker_repository     = google_artifact_registry_repository.functions.id
  iam_propagation_wait  = var.iam_propagation_wait

  memory_mb     = var.service_functions["renew_watch"].memory_mb
  timeout_s     = var.service_functions["renew_watch"].timeout_s
  max_instances = var.service_functions["renew_watch"].max_instances
  min_instances = var.service_functions["renew_watch"].min_instances

  ingress_settings = "ALLOW_INTERNAL_ONLY"
  environment_variables = merge(local.base_environment, local.mailbox_token_environment, {
    INBOXFLOW_GMAIL_TOPIC = google_pubsub_topic.pushed["ingest"].id
  })
  secret_environment_variables = local.gmail_secret
  invoker_members              = { scheduler = google_service_account.scheduler_invoker.member }

  depends_on = [
    google_project_service.enabled,
    google_project_iam_member.build,
  ]
}
