# A monthly budget on this project's spend, alerting at 50/90/100 % of
# actual and 100 % of forecast spend. Budgets live on the billing account, so
# the deployer needs roles/billing.costsManager there (infra/bootstrap grants
# it when given the billing account); leave billing_account empty to skip.

variable "billing_account" {
  type        = string
  description = "Billing account id (XXXXXX-XXXXXX-XXXXXX) that pays for the project; empty: no budget is created."
  default     = ""

  validation {
    condition     = var.billing_account == "" || can(regex("^[0-9A-F]{6}-[0-9A-F]{6}-[0-9A-F]{6}$", var.billing_account))
    error_message = "billing_account must be empty or an id like 012345-6789AB-CDEF01."
  }
}

variable "budget_amount" {
  type        = number
  description = "Monthly budget in budget_currency (whole units)."
  default     = 100

  validation {
    condition     = var.budget_amount > 0
    error_message = "budget_amount must be positive."
  }
}

variable "budget_currency" {
  type        = string
  description = "Currency of budget_amount; must be the billing account's currency."
  default     = "USD"
}

resource "google_billing_budget" "monthly" {
  count = var.billing_account == "" ? 0 : 1

  billing_account = var.billing_account
  display_name    = "inboxflow ${var.environment} (${var.project_id})"

  budget_filter {
    projects        = ["projects/${data.google_project.this.number}"]
    calendar_period = "MONTH"
  }

  amount {
    specified_amount {
      currency_code = var.budget_currency
      units         = tostring(var.budget_amount)
    }
  }

  threshold_rules {
    threshold_percent = 0.5
  }

  threshold_rules {
    threshold_percent = 0.9
  }

  threshold_rules {
    threshold_percent = 1.0
  }

  threshold_rules {
    threshold_percent = 1.0
    spend_basis       = "FORECASTED_SPEND"
  }

  # The billing account's admins get the default emails too. A budget
  # notifies at most five channels.
  all_updates_rule {
    monitoring_notification_channels = slice(local.alert_channels, 0, min(5, length(local.alert_channels)))
    disable_default_iam_recipients   = false
  }

  depends_on = [google_project_service.enabled]
}
