// A burst of admissions is counted over every relay on one database: sixteen waiting here and
// twenty reported by another relay are a burst, and one relay in it has one relay's delivery
// allowance, the others none; sixteen alone are not one. Each relay reports the most that waited since its last report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admissionWaiting, burstAllowance, burstBegan, burstSaturates } from '../../relay/domain/admission-load.js';
import { RelayBus } from '../../relay/bus.js';
import type { RelayServices } from '../../relay/services.js';

const relay = () => {
  const bus = new RelayBus();
  const reports: Array<{ relay: string; waiting: number }> = [];
  bus.on('admission.load', (r) => reports.push(r));
  return { services: { bus } as unknown as RelayServices, bus, reports };
};

test('sixteen admissions waiting on one relay alone are no burst', () => {
  const { services } = relay();
  const done = Array.from({ length: 16 }, () => admissionWaiting(services));
  assert.equal(burstAllowance(services, () => 8), undefined);
  for (const d of done) d();
});

test("another relay's waiting admissions count: the burst's allowance goes whole to the first relay in it, by id", () => {
  const { services, bus } = relay();
  assert.equal(burstAllowance(services, () => 8), undefined); // the worker asks from its start
  // Relay ids are random UUIDs (hex): '~' sorts after every one, '!' before.
  bus.emit('admission.load', { relay: '~after', waiting: 20 });
  const done = Array.from({ length: 12 }, () => admissionWaiting(services));
  assert.equal(burstAllowance(services, () => 8), 8);
  bus.emit('admission.load', { relay: '!before', waiting: 5 });
  done.push(admissionWaiting(services));
  assert.equal(burstAllowance(services, () => 8), 0);
  // A relay whose admissions no longer wait is not in the burst: this one delivers again.
  bus.emit('admission.load', { relay: '!before', waiting: 0 });
  done.push(admissionWaiting(services));
  assert.equal(burstAllowance(services, () => 8), 8);
  for (const d of done) d();
});

test('a relay reports its own count at once, then at most every 100 ms with the most that waited meanwhile', async () => {
  const { services, reports } = relay();
  const first = admissionWaiting(services);
  assert.equal(reports.length, 1);
  assert.equal(reports[0]!.waiting, 1);
  const more = Array.from({ length: 4 }, () => admissionWaiting(services));
  for (const d of more) d();
  first();
  assert.equal(reports.length, 1);
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(reports.length, 2);
  assert.equal(reports[1]!.waiting, 5);
  // Its own reports are not another relay's.
  assert.equal(burstAllowance(services, () => 8), undefined);
});

test('a burst saturates the relay once it has been seen for a second with no gap over 500 ms; a hiccup does not', () => {
  // Sightings every 200 ms (a closed loop's commits on a loaded machine): one burst, saturating from 1,000 ms on.
  let since = -Infinity;
  let seenAt = -Infinity;
  for (let now = 10_000; now <= 11_000; now += 200) {
    since = burstBegan(since, seenAt, now);
    seenAt = now;
    assert.equal(since, 10_000);
    assert.equal(burstSaturates(since, seenAt, now), now - 10_000 >= 1_000);
  }
  // It lapses 500 ms after its last sighting (the burst itself lasts a second after it)...
  assert.equal(burstSaturates(since, seenAt, 11_500), true);
  assert.equal(burstSaturates(since, seenAt, 11_501), false);
  // ...and a sighting after a longer gap begins a new burst, not saturating yet.
  since = burstBegan(since, seenAt, 11_600);
  assert.equal(since, 11_600);
  assert.equal(burstSaturates(since, 11_600, 11_600), false);
  // A steady load's hiccup: 300 ms of sightings, then none.
  assert.equal(burstSaturates(20_000, 20_300, 20_300), false);
});

test("a relay whose own batch keeps its clients waiting sees the burst on the other relays' reports, and its saturation", async () => {
  const { services, bus } = relay();
  assert.equal(burstAllowance(services, () => 8), undefined); // the worker asks from its start
  // Twelve admissions here wait through a long batch (no new one starts here meanwhile), while
  // another relay keeps reporting twenty waiting: one burst, seen on every report, saturating after
  // a second. Seen only when this relay's own clients sent, it would have ended a second after.
  const done = Array.from({ length: 12 }, () => admissionWaiting(services));
  const allowance = () => burstAllowance(services, (saturated) => (saturated ? 2 : 8));
  bus.emit('admission.load', { relay: '~after', waiting: 20 });
  assert.equal(allowance(), 8);
  const started = performance.now();
  while (performance.now() - started < 1_150) {
    await new Promise((r) => setTimeout(r, 100));
    bus.emit('admission.load', { relay: '~after', waiting: 20 });
  }
  assert.equal(allowance(), 2);
  for (const d of done) d();
});
