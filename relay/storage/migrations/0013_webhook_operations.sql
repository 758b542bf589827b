-- Webhook operations (issue 25, CONTRACT section 11). A rotated signing secret keeps the previous
-- one (sealed like it) until previous_secret_until on the relay clock: until then every request
-- carries both signatures. disabled_at: an endpoint an operator paused; nothing is sent to it.
ALTER TABLE webhooks ADD COLUMN previous_secret_enc TEXT;
ALTER TABLE webhooks ADD COLUMN previous_secret_until TEXT;
ALTER TABLE webhooks ADD COLUMN disabled_at TEXT;
