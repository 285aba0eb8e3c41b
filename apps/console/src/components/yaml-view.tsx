import { useMemo } from 'react';
import { yamlTokens } from '../model/yaml-tokens';

/** A definition's exact text, highlighted line by line. */
export function YamlView({ text }: { text: string }) {
  const lines = useMemo(() => yamlTokens(text), [text]);
  return (
    <pre className="yaml" aria-label="definition">
      {lines.map((tokens, i) => (
        <div key={i} className="yaml-line">
          <span className="yaml-ln" aria-hidden="true">
            {i + 1}
          </span>
          {tokens.map((t, j) => (
            <span key={j} className={`tok-${t.kind}`}>
              {t.text}
            </span>
          ))}
        </div>
      ))}
    </pre>
  );
}
