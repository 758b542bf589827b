-- The header From of captured mail, decoded: the envelope sender of a relay delivery is a VERP
-- bounce address (bounce+em_...), so the list shows who the message says it is from as well.
-- Mail captured before this migration keeps NULL (its raw message is still there).
ALTER TABLE captured_messages ADD COLUMN header_from TEXT;
