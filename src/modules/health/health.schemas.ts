import { Type } from 'typebox';

export const HealthSchema = Type.Object(
  { status: Type.Literal('ok') },
  { additionalProperties: false, description: 'The process is alive.' },
);

export const ReadySchema = Type.Object(
  {
    status: Type.Literal('ready'),
    checks: Type.Record(Type.String(), Type.Literal('ok'), {
      description: 'Each dependency checked: database, migrations, and redis when configured.',
    }),
  },
  {
    additionalProperties: false,
    description: 'The instance can serve: its dependencies answer and its schema is up to date.',
  },
);

export const MetricsSchema = Type.String({ description: 'Prometheus text exposition format.' });
