variable "project_id" {
  type        = string
  description = "Project of this environment (the one infra/ deploys to)."
}

variable "region" {
  type        = string
  description = "Region the builds deploy to (_REGION of cloudbuild.yaml); also where the connection, the repository link, the triggers and the build staging bucket live."
  default     = "us-central1"
}

variable "environment" {
  type        = string
  description = "dev, staging or prod: prod gets the approval-gated release trigger, the others a trigger on every push to deploy_branch."

  validation {
    condition     = contains(["dev", "staging", "prod"], var.environment)
    error_message = "environment must be one of dev, staging, prod."
  }
}

variable "github_connection" {
  type        = string
  description = "Name of the 2nd-gen Cloud Build connection to GitHub, created once in the console in `region` (Cloud Build > Repositories > 2nd gen > Create host connection); the bootstrap links the repository through it."
}

variable "github_owner" {
  type        = string
  description = "GitHub owner of the repository the triggers build (the Cloud Build GitHub app of github_connection must be installed on it)."
}

variable "github_repository" {
  type        = string
  description = "GitHub repository name the triggers build."
}

variable "deploy_branch" {
  type        = string
  description = "Branch whose pushes deploy dev/staging."
  default     = "main"
}

variable "release_tag_pattern" {
  type        = string
  description = "Tags (RE2) whose pushes start a production build; it runs only after an approver approves it."
  default     = "^v[0-9]+\\.[0-9]+\\.[0-9]+$"
}

variable "prod_approvers" {
  type        = list(string)
  description = "IAM members (user:..., group:...) who may approve production builds (roles/cloudbuild.builds.approver); prod only."
  default     = []

  validation {
    condition     = alltrue([for member in var.prod_approvers : can(regex("^(user|group):", member))])
    error_message = "prod_approvers must be user:EMAIL or group:EMAIL members."
  }
}

variable "billing_account" {
  type        = string
  description = "Billing account id: when set, the deployer gets roles/billing.costsManager on it so infra/budget.tf can manage the budget (needs a billing account admin to apply). Empty: no budget access."
  default     = ""
}
