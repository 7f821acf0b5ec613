output "function_name" {
  description = "Name of the Cloud Function."
  value       = google_cloudfunctions2_function.function.name
}

output "function_uri" {
  description = "run.app URI of the function (the push endpoint)."
  value       = google_cloudfunctions2_function.function.service_config[0].uri
}

output "service_name" {
  description = "Underlying Cloud Run service name."
  value       = google_cloudfunctions2_function.function.service_config[0].service
}

output "service_account_email" {
  description = "Email of the function's own service account."
  value       = google_service_account.function.email
}

output "service_account_member" {
  description = "IAM member string (serviceAccount:EMAIL) of the function's identity."
  value       = google_service_account.function.member
}

output "subscription_id" {
  description = "Push subscription id (projects/P/subscriptions/S)."
  value       = google_pubsub_subscription.push.id
}
