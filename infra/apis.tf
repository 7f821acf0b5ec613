# APIs this stack enables. Terraform itself needs Service Usage and Resource
# Manager (data.google_project) before its first plan: infra/bootstrap
# enables those (bootstrap_apis), see docs/deploy.md.
locals {
  apis = [
    "artifactregistry.googleapis.com", # function images built by Cloud Build
    "billingbudgets.googleapis.com",   # budget.tf (only used when billing_account is set)
    "cloudbuild.googleapis.com",
    "cloudfunctions.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "cloudscheduler.googleapis.com",
    "cloudtasks.googleapis.com",
    "cloudtrace.googleapis.com", # spans exported by the functions (roles/cloudtrace.agent)
    "firestore.googleapis.com",
    "gmail.googleapis.com",
    "iam.googleapis.com",
    "iamcredentials.googleapis.com", # OIDC tokens for push, tasks and scheduler
    "logging.googleapis.com",
    "monitoring.googleapis.com", # monitoring.tf: alert policies, dashboard
    "pubsub.googleapis.com",
    "run.googleapis.com", # gen2 functions are Cloud Run services
    "secretmanager.googleapis.com",
    "storage.googleapis.com",
  ]
}

locals {
  # Vertex AI only when the nodes call Gemini through it (llm = "vertex").
  enabled_apis = concat(local.apis, var.llm == "vertex" ? ["aiplatform.googleapis.com"] : [])
}

resource "google_project_service" "enabled" {
  for_each = toset(local.enabled_apis)

  project = var.project_id
  service = each.value

  # Destroying this stack must never switch an API off for the whole project.
  disable_on_destroy = false
}
