# The one source archive every function is built from. Its object name is
# the archive's hash (the zip is reproducible), so a code change uploads a
# new object and redeploys every function, and an unchanged tree does not.

resource "google_storage_bucket" "source" {
  #checkov:skip=CKV_GCP_62:Holds only our own build inputs (no user data), written by the deploy and read by the function build; Cloud Audit Logs already record who changed it, and a log bucket per environment would add cost without value.
  project  = var.project_id
  name     = "${var.project_id}-inboxflow-source"
  location = var.region

  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = false

  versioning {
    enabled = true
  }

  # Old archives are only needed until the functions built from them are
  # replaced; a rollback rebuilds the archive from the older commit.
  lifecycle_rule {
    condition {
      age = 90
    }
    action {
      type = "Delete"
    }
  }

  lifecycle_rule {
    condition {
      days_since_noncurrent_time = 7
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.enabled]
}

resource "google_storage_bucket_object" "source" {
  name   = "source-${filesha256(var.source_archive)}.zip"
  bucket = google_storage_bucket.source.name
  source = var.source_archive
}
