-- A receiver's answer to a webhook is kept as long as the email's body (issue 25): maintenance
-- finds the webhook deliveries of the emails it erases by their events (events_by_email, then
-- this), as the email page lists an email's deliveries. webhook_deliveries' UNIQUE (webhook_id,
-- event_id) cannot serve a look-up by event alone. Both backends accept this file.
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries(event_id);
