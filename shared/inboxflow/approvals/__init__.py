"""Human approval: approval records, reviewer tokens, the review pages and the approval function."""
