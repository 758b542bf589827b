// Reading the reports that come back to the `raven.` MX: each fixture, written after real
// Postfix, Exchange and feedback-loop reports, parses into what it says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFeedbackReport } from '../../relay/smtp/reports/read-report.js';
import { parseMimeTree } from '../../relay/smtp/reports/mime-tree.js';
import { loadReport, returnPathOf } from '../helpers/report-fixtures.js';

const values = { emailId: 'em_01jdq4zk5w9m2v3xg7h8tq1b6n', domain: 'example.test', recipient: 'Nobody@Example.org', recipient2: 'second@example.org' };
const messageId = `<${values.emailId}@${values.domain}>`;

test('a Postfix hard bounce: one failed recipient, 5.1.1, the returned message', () => {
  const report = readFeedbackReport(loadReport('postfix-hard-bounce.eml', values));
  assert.deepEqual(report, {
    kind: 'dsn',
    envelopeId: undefined,
    recipients: [{ addresses: [values.recipient, values.recipient], action: 'failed', status: '5.1.1' }],
    returned: { messageId, returnPath: returnPathOf(values.emailId, values.domain), to: [values.recipient] },
  });
});

test('a Postfix delay warning is a delayed action with a 4.x.x status, headers only', () => {
  const report = readFeedbackReport(loadReport('postfix-delayed.eml', values));
  assert.equal(report?.kind, 'dsn');
  assert.deepEqual(report.kind === 'dsn' && report.recipients, [{ addresses: [values.recipient, values.recipient], action: 'delayed', status: '4.4.1' }]);
  assert.equal(report.returned.messageId, messageId);
});

test('an expired message is a failed action with a 4.x.x status (a soft bounce)', () => {
  const report = readFeedbackReport(loadReport('postfix-expired-soft-bounce.eml', values));
  assert.deepEqual(report?.kind === 'dsn' && report.recipients.map((r) => [r.action, r.status]), [['failed', '4.4.7']]);
});

test('an Exchange Online report: the notice is nested multipart/alternative, the status 5.1.10', () => {
  const report = readFeedbackReport(loadReport('exchange-online-ndr.eml', values));
  assert.equal(report?.kind, 'dsn');
  assert.deepEqual(report.kind === 'dsn' && report.recipients, [{ addresses: [values.recipient, values.recipient], action: 'failed', status: '5.1.10' }]);
  assert.equal(report.returned.returnPath, returnPathOf(values.emailId, values.domain));
});

test('a report about two recipients keeps them apart', () => {
  const report = readFeedbackReport(loadReport('postfix-two-recipients.eml', values));
  assert.deepEqual(
    report?.kind === 'dsn' && report.recipients.map((r) => [r.addresses[0], r.action, r.status]),
    [
      [values.recipient, 'failed', '5.2.2'],
      [values.recipient2, 'delivered', '2.0.0'],
    ],
  );
});

test('an ARF abuse report names the original sender and recipient', () => {
  const report = readFeedbackReport(loadReport('yahoo-arf-abuse.eml', values));
  assert.deepEqual(report, {
    kind: 'arf',
    feedbackType: 'abuse',
    originalMailFrom: returnPathOf(values.emailId, values.domain),
    originalRecipients: [values.recipient],
    returned: { messageId, returnPath: returnPathOf(values.emailId, values.domain), to: [values.recipient] },
  });
});

test('a redacted ARF report still carries the Message-ID of the original', () => {
  const report = readFeedbackReport(loadReport('redacted-arf-abuse.eml', values));
  assert.equal(report?.kind, 'arf');
  assert.deepEqual(report.kind === 'arf' && report.originalRecipients, []);
  assert.equal(report.returned.messageId, messageId);
});

test('an auto-reply is not a report', () => {
  assert.equal(readFeedbackReport(loadReport('out-of-office.eml', values)), undefined);
});

test('a report with no recipient groups, or a multipart without its boundary, is not a report', () => {
  const empty = Buffer.from(
    'Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; x\r\n--b--\r\n',
  );
  assert.equal(readFeedbackReport(empty), undefined);
  const broken = Buffer.from('Content-Type: multipart/report; boundary=zz\r\n\r\nno parts here\r\n');
  assert.equal(readFeedbackReport(broken), undefined);
});

test('base64 and quoted-printable parts are decoded', () => {
  const status = Buffer.from('Reporting-MTA: dns; x\r\n\r\nFinal-Recipient: rfc822; a@example.org\r\nAction: failed\r\nStatus: 5.1.1\r\n').toString('base64');
  const raw = Buffer.from(
    `Content-Type: multipart/report; report-type=delivery-status; boundary="=_b"\r\n\r\n--=_b\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nh=C3=A9llo=\r\n world\r\n--=_b\r\nContent-Type: message/delivery-status\r\nContent-Transfer-Encoding: base64\r\n\r\n${status}\r\n--=_b--\r\n`,
  );
  const tree = parseMimeTree(raw);
  assert.equal(tree.parts[0]!.body.toString('utf8'), 'héllo world');
  const report = readFeedbackReport(raw);
  assert.deepEqual(report?.kind === 'dsn' && report.recipients, [{ addresses: ['a@example.org'], action: 'failed', status: '5.1.1' }]);
});

test('a tree nested deeper than any report is not walked without end', () => {
  let raw = 'Content-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; x\r\n\r\nFinal-Recipient: rfc822; a@example.org\r\nAction: failed\r\n';
  for (let i = 0; i < 50; i++) raw = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${raw}\r\n--b${i}--\r\n`;
  assert.equal(readFeedbackReport(Buffer.from(raw)), undefined);
});
