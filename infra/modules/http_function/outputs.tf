output "function_name" {
  description = "Name of the Cloud Function."
  value       = google_cloudfunctions2_function.function.name
}

output "function_uri" {
  description = "run.app URI of the function (push endpoint, scheduler target)."
  value       = google_cloudfunctions2_function.function.service_config[0].uri
}

output "function_url" {
  description = "cloudfunctions.net URL of the function."
  value       = google_cloudfunctions2_function.function.url
}

output "service_name" {
  description = "Underlying Cloud Run service name (where invoker grants belong)."
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
