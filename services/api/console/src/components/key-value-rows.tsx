export interface Row {
  readonly key: string;
  readonly value: string;
}

/**
 * Rows of name and value with add and remove buttons: env variables, or secrets with `secret`
 * (password fields, which the browser never shows and the page never puts back once sent).
 */
export function KeyValueRows(props: { legend: string; rows: Row[]; onChange: (rows: Row[]) => void; secret?: boolean }) {
  const { legend, rows, onChange, secret } = props;
  const set = (index: number, change: Partial<Row>) => onChange(rows.map((row, i) => (i === index ? { ...row, ...change } : row)));
  return (
    <fieldset>
      <legend>{legend}</legend>
      {rows.map((row, index) => (
        <div class="kv-row" key={index}>
          <input
            aria-label={`${legend} name ${index + 1}`}
            placeholder="NAME"
            value={row.key}
            onInput={(e) => set(index, { key: e.currentTarget.value })}
          />
          <input
            aria-label={`${legend} value ${index + 1}`}
            placeholder="value"
            type={secret ? 'password' : 'text'}
            autoComplete={secret ? 'new-password' : 'off'}
            value={row.value}
            onInput={(e) => set(index, { value: e.currentTarget.value })}
          />
          <button type="button" class="link" onClick={() => onChange(rows.filter((_, i) => i !== index))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="secondary" onClick={() => onChange([...rows, { key: '', value: '' }])}>
        {secret ? 'Add secret' : 'Add variable'}
      </button>
    </fieldset>
  );
}

/** The filled rows as an object, or undefined when there are none. */
export const rowsToRecord = (rows: Row[]): Record<string, string> | undefined => {
  const filled = rows.filter((row) => row.key.trim() !== '');
  return filled.length ? Object.fromEntries(filled.map((row) => [row.key.trim(), row.value])) : undefined;
};
