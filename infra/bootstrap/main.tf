# Bootstrap of one environment, applied once by a project owner (a person,
# not a build): the APIs Terraform itself needs, the deployer service account
# every Cloud Build deploy runs as, with a listed set of roles (never owner
# or editor), and the Cloud Build triggers. infra/ is then applied only by
# builds running as the deployer. See docs/deploy.md ("Bootstrap").

# Before any plan of infra/: Service Usage enables the rest, Resource Manager
# answers data.google_project, IAM and Cloud Build create the deployer and
# its triggers, Pub/Sub gets its service agent.
locals {
  bootstrap_apis = [
    "cloudbuild.googleapis.com",
    "cloudresourcemanager.googleapis.com",
    "iam.googleapis.com",
    "pubsub.googleapis.com",        # its service agent is created below
    "secretmanager.googleapis.com", # secrets get their values before the first deploy
    "serviceusage.googleapis.com",
    "storage.googleapis.com", # Terraform state
  ]

  # Only with a billing account: the grant below goes through the Cloud
  # Billing API, the budget (infra/budget.tf) through the Budget API.
  budget_apis = var.billing_account == "" ? [] : ["cloudbilling.googleapis.com", "billingbudgets.googleapis.com"]

  # What the deployer administers for infra/, one role per kind of resource.
  deployer_roles = [
    "roles/cloudfunctions.developer",             # the functions (create, update; no IAM on them)
    "roles/run.admin",                            # invoker bindings on the functions' Cloud Run services
    "roles/pubsub.admin",                         # topics, subscriptions and their IAM
    "roles/datastore.owner",                      # the Firestore database, indexes and TTL policies
    "roles/cloudtasks.admin",                     # the approvals queue and its IAM
    "roles/cloudscheduler.admin",                 # the renew-watch job
    "roles/secretmanager.admin",                  # secrets and their accessor bindings (values are added by people)
    "roles/storage.admin",                        # source bucket and archive, Terraform state
    "roles/serviceusage.serviceUsageAdmin",       # enable APIs; create the Pub/Sub service agent
    "roles/monitoring.alertPolicyEditor",         # monitoring.tf alert policies
    "roles/monitoring.dashboardEditor",           # monitoring.tf dashboard
    "roles/monitoring.notificationChannelEditor", # monitoring.tf: the alert_email channel
    "roles/artifactregistry.admin",               # artifacts.tf: the function images' repository and its cleanup policy
    "roles/logging.configWriter",                 # monitoring.tf log-based metrics
    "roles/logging.logWriter",                    # the build's own logs (CLOUD_LOGGING_ONLY)
  ]

  # Granted apart: the function identities are created by the very apply
  # that deploys as them, so these cannot sit on single service accounts.
  deployer_service_account_roles = [
    "roles/iam.serviceAccountAdmin", # function identities and the grants on them
    "roles/iam.serviceAccountUser",  # deploy functions, jobs and tasks as those identities
  ]

  # The only roles infra/ grants on the whole project (tests/infra keeps this
  # equal to the stack's project-level grants). The deployer's Project IAM
  # Admin is conditioned on them, so it cannot grant itself (or anyone) owner.
  grantable_project_roles = [
    "roles/aiplatform.user", # llm = "vertex": the nodes that call Gemini
    "roles/artifactregistry.writer",
    "roles/cloudtrace.agent",
    "roles/datastore.user",
    "roles/logging.logWriter",
    "roles/secretmanager.secretAccessor", # the mailboxes' own tokens, conditioned on their names (infra/iam.tf)
    "roles/storage.objectViewer",
  ]
}

resource "google_project_service" "bootstrap" {
  for_each = toset(concat(local.bootstrap_apis, local.budget_apis))

  project = var.project_id
  service = each.value

  disable_on_destroy = false
}

# infra/ grants the Pub/Sub service agent (service-NUMBER@gcp-sa-pubsub...)
# the dead-lettering roles. Google creates that agent lazily, and granting to
# it before it exists fails; creating it here, as the owner, guarantees it
# exists before infra/ is ever applied.
resource "google_project_service_identity" "pubsub" {
  provider = google-beta

  project = var.project_id
  service = "pubsub.googleapis.com"

  depends_on = [google_project_service.bootstrap]
}

resource "google_service_account" "deployer" {
  project      = var.project_id
  account_id   = "ibx-deployer"
  display_name = "inboxflow deployer"
  description  = "Cloud Build identity that tests, plans and applies infra/ (docs/deploy.md lists its roles)."

  depends_on = [google_project_service.bootstrap]
}

resource "google_project_iam_member" "deployer" {
  for_each = toset(local.deployer_roles)

  project = var.project_id
  role    = each.value
  member  = google_service_account.deployer.member
}

resource "google_project_iam_member" "deployer_service_accounts" {
  #checkov:skip=CKV_GCP_41:The deployer must act as every function identity infra/ creates (deploying a function, job or task as it); those accounts are created by the same apply, so no narrower resource can hold the grant before it runs.
  #checkov:skip=CKV_GCP_49:Creating the function identities and deploying as them is the deployer's job; it holds no token creator or key admin role, and only builds (not people) run as it.
  for_each = toset(local.deployer_service_account_roles)

  project = var.project_id
  role    = each.value
  member  = google_service_account.deployer.member
}

# Project-level grants in infra/ (function identities, the function build)
# need setIamPolicy on the project; the condition limits the roles the
# deployer may add or remove to grantable_project_roles.
resource "google_project_iam_member" "deployer_project_iam" {
  project = var.project_id
  role    = "roles/resourcemanager.projectIamAdmin"
  member  = google_service_account.deployer.member

  condition {
    title       = "inboxflow-grantable-roles"
    description = "May grant or revoke only the project-level roles infra/ uses."
    expression  = "api.getAttribute('iam.googleapis.com/modifiedGrantsByRole', []).hasOnly(${jsonencode(local.grantable_project_roles)})"
  }
}

# Budgets live on the billing account (infra/budget.tf).
resource "google_billing_account_iam_member" "deployer_budget" {
  count = var.billing_account == "" ? 0 : 1

  billing_account_id = var.billing_account
  role               = "roles/billing.costsManager"
  member             = google_service_account.deployer.member

  depends_on = [google_project_service.bootstrap]
}

# `gcloud builds submit` (make deploy) uploads the source to a staging bucket;
# its default, gs://PROJECT_cloudbuild, is created in the US multi-region,
# which a resource-location policy refuses. This one is in the region, with
# uniform access and public access prevention; uploads are kept 7 days.
resource "google_storage_bucket" "build_staging" {
  #checkov:skip=CKV_GCP_62:Holds only source tarballs of manual builds for 7 days; Cloud Audit Logs record who wrote them, a log bucket would add cost without value.
  #checkov:skip=CKV_GCP_78:Uploads are throwaway copies of a git tree, deleted after 7 days; versioning would only keep them longer.
  project  = var.project_id
  name     = "${var.project_id}-build-staging"
  location = var.region

  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"

  lifecycle_rule {
    condition {
      age = 7
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.bootstrap]
}

# --- triggers: every deploy runs cloudbuild.yaml as the deployer --------------------

# The repository, linked through a 2nd-gen Cloud Build connection (the
# console's default) that a person creates once in the region, because
# authorizing the GitHub app needs a browser (docs/deploy.md, step 2):
# cloud.google.com/build/docs/automating-builds/github/connect-repo-github.
resource "google_cloudbuildv2_repository" "app" {
  project           = var.project_id
  location          = var.region
  name              = var.github_repository
  parent_connection = var.github_connection
  remote_uri        = "https://github.com/${var.github_owner}/${var.github_repository}.git"

  depends_on = [google_project_service.bootstrap]
}

# dev and staging: every push to the deploy branch.
resource "google_cloudbuild_trigger" "deploy" {
  count = var.environment == "prod" ? 0 : 1

  project         = var.project_id
  location        = var.region
  name            = "inboxflow-deploy-${var.environment}"
  description     = "Test, plan and apply infra/ to ${var.environment} on every push to ${var.deploy_branch}."
  filename        = "cloudbuild.yaml"
  service_account = google_service_account.deployer.id

  repository_event_config {
    repository = google_cloudbuildv2_repository.app.id

    push {
      branch = "^${var.deploy_branch}$"
    }
  }

  substitutions = {
    _ENV    = var.environment
    _REGION = var.region
  }

  depends_on = [google_project_iam_member.deployer, google_project_iam_member.deployer_service_accounts]
}

# prod: a release tag queues a build that waits for an approver
# (roles/cloudbuild.builds.approver) before any step runs, apply included.
resource "google_cloudbuild_trigger" "deploy_prod" {
  count = var.environment == "prod" ? 1 : 0

  project         = var.project_id
  location        = var.region
  name            = "inboxflow-deploy-prod"
  description     = "Test, plan and apply infra/ to prod for a release tag, after a manual approval."
  filename        = "cloudbuild.yaml"
  service_account = google_service_account.deployer.id

  repository_event_config {
    repository = google_cloudbuildv2_repository.app.id

    push {
      tag = var.release_tag_pattern
    }
  }

  substitutions = {
    _ENV    = "prod"
    _REGION = var.region
  }

  approval_config {
    approval_required = true
  }

  depends_on = [google_project_iam_member.deployer, google_project_iam_member.deployer_service_accounts]
}

resource "google_project_iam_member" "prod_approver" {
  for_each = var.environment == "prod" ? toset(var.prod_approvers) : toset([])

  project = var.project_id
  role    = "roles/cloudbuild.builds.approver"
  member  = each.value
}
