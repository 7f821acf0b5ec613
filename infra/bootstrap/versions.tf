terraform {
  required_version = ">= 1.5.0, < 2.0.0"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 7.0.0, < 8.0.0"
    }
    # Only for google_project_service_identity, which is beta-only.
    google-beta = {
      source  = "hashicorp/google-beta"
      version = ">= 7.0.0, < 8.0.0"
    }
  }

  # Same state bucket as the stack, another prefix:
  #   terraform init -backend-config=bucket=$PROJECT_ID-tfstate \
  #     -backend-config=prefix=inboxflow-bootstrap/$ENV
  backend "gcs" {}
}

provider "google" {
  project = var.project_id
  region  = var.region

  default_labels = {
    app         = "inboxflow"
    environment = var.environment
  }
}

provider "google-beta" {
  project = var.project_id
  region  = var.region
}
