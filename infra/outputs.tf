output "approval_url" {
  description = "Approval function URL (INBOXFLOW_APPROVAL_URL); reviewers' links point here."
  value       = local.approval_url
}

output "approval_service" {
  description = "Cloud Run service of the approval function (the build disables its invoker IAM check when approval_access = invoker_check_disabled)."
  value       = module.approve.service_name
}

output "approval_invoker_iam_check" {
  description = "disabled when approval_access = invoker_check_disabled (cloudbuild.yaml's approval-access step then turns the check off on approval_service), else enabled."
  value       = var.approval_access == "invoker_check_disabled" ? "disabled" : "enabled"
}

# The delegate's address is known before anything is applied (its account id
# is fixed, service_accounts.tf), so this output's value reads only
# variables. A targeted apply writes only the outputs downstream of its
# targets: depends_on puts this one after the secrets that docs/deploy.md
# step 4 targets, so `terraform output` has it right after that apply and
# GMAIL_CREDENTIALS can name the delegate at once.
output "gmail_delegation_service_account" {
  description = "With gmail_keyless_delegation: the delegate's email, to put in GMAIL_CREDENTIALS ({\"type\": \"keyless_delegation\", \"service_account\": EMAIL}); else empty."
  value       = var.gmail_keyless_delegation ? local.gmail_delegate_email : ""

  depends_on = [google_secret_manager_secret.runtime]
}

# Google assigns the client id when the account is created: after the
# targeted apply of step 4 (which targets the delegate), or ask
# `gcloud iam service-accounts describe EMAIL --format='value(oauth2ClientId)'`.
output "gmail_delegation_client_id" {
  description = "With gmail_keyless_delegation: the client id a Workspace admin authorizes for domain-wide delegation (Security > API controls); else empty."
  value       = try(google_service_account.gmail_delegate[0].unique_id, "")
}

output "approval_run_uri" {
  description = "run.app URI of the approval function."
  value       = module.approve.function_uri
}

output "renew_watch_uri" {
  description = "run.app URI of the renew-watch function (OIDC only)."
  value       = module.renew_watch.function_uri
}

output "gmail_topic" {
  description = "Full topic name to pass as topicName to Gmail users.watch."
  value       = google_pubsub_topic.pushed["ingest"].id
}

output "node_functions" {
  description = "Per node (graph.node): function, URI, topic, subscription and identity."
  value = {
    for key, node in module.node : key => {
      function        = node.function_name
      uri             = node.function_uri
      topic           = google_pubsub_topic.pushed[key].id
      subscription    = node.subscription_id
      dead_letter     = google_pubsub_subscription.dead_letter[key].id
      service_account = node.service_account_email
    }
  }
}

output "dead_letter_subscriptions" {
  description = "Pull subscriptions holding dead-lettered messages, by function (\"shared\": messages no node can be named for)."
  value = merge(
    { for key, subscription in google_pubsub_subscription.dead_letter : key => subscription.id },
    { shared = google_pubsub_subscription.shared_dead_letter.id },
  )
}

output "function_service_accounts" {
  description = "Email of each function's own identity, by function (graph.node, ingest, approve, renew_watch)."
  value = merge(
    { for key, node in module.node : key => node.service_account_email },
    {
      ingest      = module.ingest.service_account_email
      approve     = module.approve.service_account_email
      renew_watch = module.renew_watch.service_account_email
    },
  )
}

output "tasks_queue" {
  description = "Cloud Tasks queue id for approval deadlines."
  value       = google_cloud_tasks_queue.approvals.id
}

output "tasks_service_account" {
  description = "Identity of approval deadline tasks (INBOXFLOW_TASKS_INVOKER)."
  value       = google_service_account.tasks_invoker.email
}

output "source_object" {
  description = "Source archive object every function was built from."
  value       = "gs://${google_storage_bucket.source.name}/${google_storage_bucket_object.source.name}"
}

output "firestore_database" {
  description = "Firestore database id."
  value       = google_firestore_database.default.id
}
