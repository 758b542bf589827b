-- Indexes for GET /v1/emails at 100,000 emails and more (BENCHMARKS.md, item 4).

-- ?recipient=: the To rows of one address, in list order, straight from an index. email_seq is a
-- copy of emails.seq, so a page for an address with ten emails costs what one for an address with
-- a hundred thousand does. Before, the list walked every email of the project and probed its
-- recipients: an address with few emails scanned them all. Whatever inserts recipients must set it
-- (domain/admission.ts does); a row without it is missing from this filter.
ALTER TABLE recipients ADD COLUMN email_seq BIGINT;
UPDATE recipients SET email_seq = (SELECT seq FROM emails WHERE emails.id = recipients.email_id);
DROP INDEX recipients_to_lookup;
CREATE INDEX recipients_to_by_seq ON recipients(address_lc, type, email_seq);

-- ?status= for an email:send key (which reads only its own emails): without it a rare status
-- behind a cursor walked the key's emails one by one.
CREATE INDEX emails_by_key_status ON emails(key_id, status, seq);
