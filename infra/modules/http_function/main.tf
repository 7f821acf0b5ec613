# One Cloud Function (2nd gen) with its own identity, the project roles and
# secrets that identity may use, and the principals allowed to invoke it.
# Used directly for the HTTP functions (approve, renew_watch) and by
# modules/node_function for every Pub/Sub-pushed function.

resource "google_service_account" "function" {
  project      = var.project_id
  account_id   = var.service_account_id
  display_name = "inboxflow ${var.function_name}"
  description  = "Identity of the ${var.function_name} function."
}

resource "google_project_iam_member" "function" {
  for_each = var.project_roles

  project = var.project_id
  role    = each.value
  member  = google_service_account.function.member
}

# Accessor on each secret, not on the project's secrets at large.
resource "google_secret_manager_secret_iam_member" "function" {
  for_each = var.secret_environment_variables

  project   = var.project_id
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.function.member
}

# IAM is eventually consistent: a grant typically takes 2 minutes to apply,
# sometimes 7 or more (cloud.google.com/iam/docs/access-change-propagation).
# A function whose identity cannot yet read its secrets fails its first
# deploy, so the build waits here once; the wait runs again only when the
# grants change. The caller's depends_on puts the build account's project
# roles before this wait too.
#
# The triggers are built from this module's inputs only, values the plan
# knows, never from the grants' attributes: the provider rewrites a secret
# grant's secret_id from S to projects/P/secrets/S when it applies it
# (iam_secret_manager_secret.go sets it to the updater's GetResourceId()),
# and a trigger that changes between plan and apply stops the first apply
# ("Provider produced inconsistent final plan"). depends_on orders the wait
# after the grants instead.
resource "time_sleep" "iam_propagation" {
  create_duration = var.iam_propagation_wait

  triggers = {
    service_account = "${var.service_account_id}@${var.project_id}"
    secrets         = join(",", sort([for name, secret in var.secret_environment_variables : "${name}=${secret}"]))
    project_roles   = join(",", sort(tolist(var.project_roles)))
  }

  depends_on = [
    google_secret_manager_secret_iam_member.function,
    google_project_iam_member.function,
  ]
}

resource "google_cloudfunctions2_function" "function" {
  project     = var.project_id
  location    = var.region
  name        = var.function_name
  description = var.description
  labels      = var.labels

  build_config {
    runtime         = var.runtime
    entry_point     = var.entry_point
    service_account = var.build_service_account
    # The stack's repository (artifacts.tf), whose cleanup policy keeps the
    # recent images only, instead of gcf-artifacts, which keeps them all.
    docker_repository = var.docker_repository

    source {
      storage_source {
        bucket = var.source_bucket
        object = var.source_object
      }
    }
  }

  service_config {
    available_memory                 = "${var.memory_mb}Mi"
    timeout_seconds                  = var.timeout_s
    max_instance_count               = var.max_instances
    min_instance_count               = var.min_instances
    max_instance_request_concurrency = 1
    ingress_settings                 = var.ingress_settings
    all_traffic_on_latest_revision   = true
    service_account_email            = google_service_account.function.email
    environment_variables            = var.environment_variables

    dynamic "secret_environment_variables" {
      for_each = var.secret_environment_variables
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }
  }

  # The function cannot start without its secrets and roles, granted and propagated.
  depends_on = [time_sleep.iam_propagation]
}

# Invoker on the underlying Cloud Run service, not on the function resource:
# requests go to the run.app URL and Cloud Run checks this binding.
resource "google_cloud_run_service_iam_member" "invoker" {
  for_each = var.invoker_members

  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.function.service_config[0].service
  role     = "roles/run.invoker"
  member   = each.value
}
