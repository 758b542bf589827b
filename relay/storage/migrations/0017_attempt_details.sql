-- What an attempt says beyond its outcome (issue 25). A webhook attempt keeps how long the
-- receiver took (real milliseconds, until its answer was read or the attempt failed) and the first
-- 1,024 bytes of its answer as text (response_truncated: the answer was longer). A delivery
-- attempt keeps the TLS version its conversation ran over and whether the server's certificate
-- verified (NULL: no TLS was tried).
ALTER TABLE webhook_attempts ADD COLUMN duration_ms INTEGER;
ALTER TABLE webhook_attempts ADD COLUMN response_body TEXT;
ALTER TABLE webhook_attempts ADD COLUMN response_truncated INTEGER;
ALTER TABLE delivery_attempts ADD COLUMN tls_version TEXT;
ALTER TABLE delivery_attempts ADD COLUMN certificate_verified INTEGER;
