// A typical HTML email of about 50 KB, as template builders write them: a <style> block with
// media queries, a table layout, inline styles on every cell, a few images and a dozen links.
// The checks bench (bench/checks.ts) measures its checks.

const ROW = (i: number) => `
<tr>
  <td class="item" style="padding:12px 24px;border-bottom:1px solid #e5e7eb;font-family:Helvetica,Arial,sans-serif;font-size:14px;line-height:20px;color:#111827;">
    <table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="border-collapse:collapse;">
      <tr>
        <td width="64" style="width:64px;vertical-align:top;"><img src="https://cdn.example.test/items/${i}.png" width="56" height="56" alt="Item ${i}" style="display:block;border:0;border-radius:6px;"></td>
        <td style="vertical-align:top;padding-left:12px;">
          <p style="margin:0 0 4px 0;font-weight:bold;">Item number ${i}: a sturdy thing you ordered</p>
          <p style="margin:0;color:#6b7280;">Quantity 1 &middot; Colour blue &middot; Size M &middot; Ships in 2 days from our warehouse.</p>
        </td>
        <td width="80" align="right" style="vertical-align:top;font-weight:bold;white-space:nowrap;">${(i * 7.5).toFixed(2)} EUR</td>
      </tr>
    </table>
  </td>
</tr>`;

export function typicalHtml(targetBytes = 50 * 1024): string {
  const head = `<!DOCTYPE html>
<html lang="en" xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Your order</title>
<style>
  body { margin: 0; padding: 0; background-color: #f3f4f6; }
  table { border-collapse: collapse; }
  img { border: 0; outline: none; text-decoration: none; }
  a { color: #2563eb; }
  .button a { display: inline-block; padding: 12px 20px; border-radius: 6px; background-color: #2563eb; color: #ffffff; text-decoration: none; }
  @media only screen and (max-width: 600px) {
    .container { width: 100% !important; }
    .item { padding: 8px 12px !important; }
  }
  @media (prefers-color-scheme: dark) { body { background-color: #111827; } }
</style>
</head>
<body style="margin:0;padding:0;background-color:#f3f4f6;">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0"><tr><td align="center" style="padding:24px 0;">
<table class="container" role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" style="width:600px;background-color:#ffffff;border-radius:8px;">
<tr><td style="padding:24px;"><a href="https://shop.example.test/"><img src="https://cdn.example.test/logo.png" width="120" alt="Shop" style="display:block;"></a></td></tr>
<tr><td style="padding:0 24px 12px 24px;font-family:Helvetica,Arial,sans-serif;font-size:20px;font-weight:bold;">Thank you for your order</td></tr>`;
  const foot = `
<tr><td class="button" align="center" style="padding:24px;"><a href="https://shop.example.test/orders/48291">View your order</a></td></tr>
<tr><td style="padding:24px;font-family:Helvetica,Arial,sans-serif;font-size:12px;color:#6b7280;">
  <a href="https://shop.example.test/help">Help</a> &middot; <a href="https://shop.example.test/returns">Returns</a> &middot;
  <a href="https://shop.example.test/privacy">Privacy</a> &middot; <a href="https://shop.example.test/unsubscribe">Unsubscribe</a>
</td></tr>
</table></td></tr></table>
</body>
</html>`;
  let rows = '';
  for (let i = 1; head.length + rows.length + foot.length < targetBytes; i++) rows += ROW(i);
  return head + rows + foot;
}
