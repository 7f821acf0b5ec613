output "function_name" {
  description = "Name of the Cloud Function."
  value       = module.function.function_name
}

output "function_uri" {
  description = "run.app URI of the function (the push endpoint)."
  value       = module.function.function_uri
}

output "service_name" {
  description = "Underlying Cloud Run service name."
  value       = module.function.service_name
}

output "service_account_email" {
  description = "Email of the function's own service account."
  value       = module.function.service_account_email
}

output "service_account_member" {
  description = "IAM member string (serviceAccount:EMAIL) of the function's identity."
  value       = module.function.service_account_member
}

output "subscription_id" {
  description = "Push subscription id (projects/P/subscriptions/S)."
  value       = google_pubsub_subscription.push.id
}
