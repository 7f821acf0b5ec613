output "approval_url" {
  description = "Approval function URL (INBOXFLOW_APPROVAL_URL); reviewers' links point here."
  value       = local.approval_url
}

output "approval_run_uri" {
  description = "run.app URI of the approval function."
  value       = google_cloudfunctions2_function.approve.service_config[0].uri
}

output "renew_watch_uri" {
  description = "run.app URI of the renew-watch function (OIDC only)."
  value       = google_cloudfunctions2_function.renew_watch.service_config[0].uri
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
  description = "Pull subscriptions holding dead-lettered messages, by function."
  value       = { for key, subscription in google_pubsub_subscription.dead_letter : key => subscription.id }
}

output "tasks_queue" {
  description = "Cloud Tasks queue id for approval deadlines."
  value       = google_cloud_tasks_queue.approvals.id
}

output "tasks_service_account" {
  description = "Identity of approval deadline tasks (INBOXFLOW_TASKS_SA)."
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
