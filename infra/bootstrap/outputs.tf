output "deployer_service_account" {
  description = "Email of the deployer identity every build runs as (cloudbuild.yaml checks it)."
  value       = google_service_account.deployer.email
}

output "deployer_roles" {
  description = "Project roles of the deployer (projectIamAdmin is conditioned to the stack's own project-level grants)."
  value       = sort(concat(local.deployer_roles, local.deployer_service_account_roles, ["roles/resourcemanager.projectIamAdmin"]))
}

output "trigger" {
  description = "Name of this environment's deploy trigger."
  value       = one(concat(google_cloudbuild_trigger.deploy[*].name, google_cloudbuild_trigger.deploy_prod[*].name))
}

output "pubsub_service_agent" {
  description = "The Pub/Sub service agent infra/ grants dead-lettering roles to (created here first)."
  value       = google_project_service_identity.pubsub.email
}

output "build_staging_bucket" {
  description = "Bucket `make deploy` stages its source in (gcloud builds submit --gcs-source-staging-dir)."
  value       = google_storage_bucket.build_staging.name
}
