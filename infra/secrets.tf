# The secrets exist here; their values never pass through Terraform (or its
# state). Add a version out of band before the first full apply, see
# docs/deploy.md:
#   gcloud secrets versions add GEMINI_API_KEY --data-file=-

resource "google_secret_manager_secret" "runtime" {
  for_each = toset(var.secret_ids)

  project   = var.project_id
  secret_id = each.value

  replication {
    auto {}
  }

  depends_on = [google_project_service.enabled]
}
