variable "project_id" {
  type        = string
  description = "Project that hosts the function."
}

variable "region" {
  type        = string
  description = "Region of the function."
}

variable "function_name" {
  type        = string
  description = "Cloud Function (and Cloud Run service) name: 4-63 characters of [a-z0-9-]."
}

variable "description" {
  type        = string
  description = "Human-readable description of the function."
  default     = ""
}

variable "service_account_id" {
  type        = string
  description = "account_id of the service account created for this function (6-30 characters)."
}

variable "project_roles" {
  type        = set(string)
  description = "Project-level roles for the function's own service account; keep to the allowlist in tests/infra."
  default     = []
}

variable "runtime" {
  type        = string
  description = "Cloud Functions runtime, e.g. python311."
}

variable "entry_point" {
  type        = string
  description = "Function in main.py to run (run_node, ingest, approve, renew_watch)."
}

variable "source_bucket" {
  type        = string
  description = "Bucket holding the source archive."
}

variable "source_object" {
  type        = string
  description = "Object name of the source archive; named by its hash so a code change redeploys."
}

variable "docker_repository" {
  type        = string
  description = "Artifact Registry repository the build pushes the function's image to (projects/P/locations/L/repositories/R), the stack's repository with its cleanup policy."
}

variable "build_service_account" {
  type        = string
  description = "Full resource id (projects/P/serviceAccounts/EMAIL) of the Cloud Build identity."
}

variable "memory_mb" {
  type        = number
  description = "Memory per instance, in MiB."
  default     = 512
}

variable "timeout_s" {
  type        = number
  description = "Request timeout in seconds."
  default     = 60
}

variable "max_instances" {
  type        = number
  description = "Upper bound on instances (back-pressure for the LLM and Gmail quotas)."
  default     = 20
}

variable "min_instances" {
  type        = number
  description = "Warm instances kept running (0 scales to zero)."
  default     = 0
}

variable "ingress_settings" {
  type        = string
  description = "ALLOW_INTERNAL_ONLY (Pub/Sub push, Cloud Scheduler and Cloud Tasks in the same project are internal) or ALLOW_ALL."
  default     = "ALLOW_INTERNAL_ONLY"

  validation {
    condition     = contains(["ALLOW_INTERNAL_ONLY", "ALLOW_INTERNAL_AND_GCLB", "ALLOW_ALL"], var.ingress_settings)
    error_message = "ingress_settings must be ALLOW_INTERNAL_ONLY, ALLOW_INTERNAL_AND_GCLB or ALLOW_ALL."
  }
}

variable "environment_variables" {
  type        = map(string)
  description = "Plain environment variables (INBOXFLOW_NODE, adapters, queue, ...)."
  default     = {}
}

variable "secret_environment_variables" {
  type        = map(string)
  description = "Environment variable name => Secret Manager secret id; the function's identity is granted accessor on each."
  default     = {}
}

variable "labels" {
  type        = map(string)
  description = "Labels for the function."
  default     = {}
}

variable "invoker_members" {
  type        = map(string)
  description = "Who may invoke the function: a static name => IAM member (serviceAccount:EMAIL), granted roles/run.invoker on its Cloud Run service. Map keys keep for_each plannable while the emails are still unknown."
  default     = {}
}

variable "iam_propagation_wait" {
  type        = string
  description = "Wait between this function's grants and its first build (a duration such as \"120s\"); IAM changes take minutes to apply."
  default     = "120s"
}
