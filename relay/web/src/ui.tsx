// Shared pieces: loading data, errors, a confirmation dialog, copy buttons, status badges.
import { cloneElement, isValidElement, toChildArray, type ComponentChild, type ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from './api';

/** Loads with `load` whenever `deps` change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const generation = useRef(0);
  const reload = useCallback(() => {
    const mine = ++generation.current;
    load().then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
      },
      (failure: unknown) => mine === generation.current && setError(messageOf(failure)),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(reload, [reload]);
  return { data, error, reload, setData };
}

export function messageOf(error: unknown): string {
  return error instanceof ApiFailure || error instanceof Error ? error.message : String(error);
}

/** Runs an action, keeping its error to show next to the control that started it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(messageOf(failure));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

export function ErrorNote({ error }: { error?: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Loading() {
  return <p class="muted">Loading…</p>;
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge badge-${value.replace(/[^a-z_]/g, '')}`}>{value.replace(/_/g, ' ')}</span>;
}

export function CopyButton({ value, label = 'Copy' }: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Clipboard refused (an http origin other than localhost): select the text for the user instead.
      const area = document.createElement('textarea');
      area.value = value;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button type="button" class="small" onClick={copy} aria-label={`${label}: ${value}`}>
      {copied ? 'Copied' : label}
    </button>
  );
}

export interface ConfirmRequest {
  title: string;
  body: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  resolve: (ok: boolean) => void;
}

let showConfirm: (request: ConfirmRequest) => void = () => undefined;

/** A confirmation dialog (not window.confirm): it names what will happen. */
export function confirmAction(title: string, body: ComponentChildren, confirmLabel: string, danger = true): Promise<boolean> {
  return new Promise((resolve) => showConfirm({ title, body, confirmLabel, danger, resolve }));
}

export function ConfirmHost() {
  const [request, setRequest] = useState<ConfirmRequest | undefined>(undefined);
  showConfirm = setRequest;
  if (!request) return null;
  const close = (ok: boolean) => {
    setRequest(undefined);
    request.resolve(ok);
  };
  return (
    <Modal title={request.title} onClose={() => close(false)}>
      <div class="modal-body">{request.body}</div>
      <div class="actions">
        <button type="button" onClick={() => close(false)}>
          Cancel
        </button>
        <button type="button" class={request.danger ? 'danger' : 'primary'} onClick={() => close(true)} autoFocus>
          {request.confirmLabel}
        </button>
      </div>
    </Modal>
  );
}

export function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => event.key === 'Escape' && onClose();
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <div class="modal-backdrop" onClick={(event) => event.target === event.currentTarget && onClose()}>
      <div class="modal" role="dialog" aria-modal="true" aria-label={title}>
        <h2>{title}</h2>
        {children}
      </div>
    </div>
  );
}

/** A secret shown once, right after it was created, with a copy button (and what else to know, `note`). */
export function SecretOnce({ label, secret, onDone, note }: { label: string; secret: string; onDone: () => void; note?: ComponentChildren }) {
  return (
    <Modal title={label} onClose={onDone}>
      <p>Copy it now: it is shown only this once and cannot be read back.</p>
      {note}
      <div class="secret">
        <code data-testid="secret">{secret}</code>
        <CopyButton value={secret} />
      </div>
      <div class="actions">
        <button type="button" class="primary" onClick={onDone}>
          Done
        </button>
      </div>
    </Modal>
  );
}

/** A table on a wide screen; at phone width (styles.css) each row is a card whose cells carry
 * their column's name, given here as data-label, beside their value (a box only then). */
export function Table({ columns, children, class: extra }: { columns: string[]; children: ComponentChildren; class?: string }) {
  return (
    <table class={extra ? `table ${extra}` : 'table'}>
      <thead>
        <tr>
          {columns.map((c, i) => (
            <th key={i}>{c}</th>
          ))}
        </tr>
      </thead>
      <tbody>{toChildArray(children).map((row) => labelCells(row, columns))}</tbody>
    </table>
  );
}

function labelCells(row: ComponentChild, columns: string[]): ComponentChild {
  if (!isValidElement(row)) return row;
  const cells = toChildArray((row.props as { children?: ComponentChildren }).children);
  return cloneElement(
    row,
    undefined,
    cells.map((cell, i) =>
      isValidElement(cell) ? (
        cloneElement(cell, { 'data-label': columns[i] ?? '' }, <div class="cell-value">{(cell.props as { children?: ComponentChildren }).children}</div>)
      ) : (
        cell
      ),
    ),
  );
}

/** key=value pairs (tags, metadata) as chips. */
export function Chips({ entries, separator }: { entries: Record<string, string>; separator: string }) {
  return (
    <>
      {Object.entries(entries).map(([k, v]) => (
        <span class="chip" key={k}>
          {k}
          {separator}
          {v}
        </span>
      ))}
    </>
  );
}

/** One term of a definition list. */
export function Field({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

/** A paperclip drawn inline (emoji fonts are not everywhere). */
export function Paperclip() {
  return (
    <svg class="icon" viewBox="0 0 24 24" width="14" height="14" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">
      <path d="M21.4 11.1 12.2 20.3a6 6 0 0 1-8.5-8.5l9.2-9.2a4 4 0 0 1 5.7 5.7l-9.2 9.2a2 2 0 0 1-2.8-2.8l8.5-8.5" />
    </svg>
  );
}
