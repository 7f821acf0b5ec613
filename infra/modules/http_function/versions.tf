terraform {
  required_version = ">= 1.5.0, < 2.0.0"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 7.0.0, < 8.0.0"
    }
    # time_sleep: waits for IAM propagation and for new log-based metrics.
    time = {
      source  = "hashicorp/time"
      version = ">= 0.13.1, < 0.14.0"
    }
  }
}
