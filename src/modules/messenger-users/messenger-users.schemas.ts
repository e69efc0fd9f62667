import { Type } from 'typebox';
import { OPENAPI_FORM } from '../../platform/openapi-form.js';
import { PLAYER_PATTERN } from '../../platform/player-id.js';
import {
  MAX_SNOWFLAKE,
  SNOWFLAKE_TEXT_PATTERN,
  Snowflake,
  SnowflakeParam,
} from '../../platform/snowflake.js';
import { Text } from '../../platform/text.js';

const UUID_PATTERN =
  '^([0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$';
const SnowflakeText = (description: string) =>
  Type.String({ pattern: SNOWFLAKE_TEXT_PATTERN, description, example: '123456789012345678' });

/** `{snowflake}` and `{uuid}`: a user and one of their linked accounts. */
export const AccountParams = Type.Object({
  snowflake: SnowflakeParam(),
  uuid: Type.String({
    pattern: UUID_PATTERN,
    'x-reason': 'must be a Minecraft UUID (32 hex digits, dashed or not)',
    description: 'A linked Minecraft UUID, dashed or not, any case.',
    example: '20934ef9488c465180a78f861586b4cf',
  }),
});

/**
 * Endpoint 7's query: whose view to read. An owner is a Discord ID, or 0, the owner of what was kept from
 * before owners were recorded (docs/decisions.md).
 */
export const ProfileQuery = Type.Object(
  {
    owner: Type.Optional(
      Type.Union([Type.Literal('0'), Snowflake()], {
        'x-reason': `must be an owner: a Discord ID from 1 to ${MAX_SNOWFLAKE}, or 0`,
        description:
          "Read this owner's view of the user (default: your own). Only with the messenger:audit grant may it " +
          'name another owner than you.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Endpoint 7's UserProfileResult. */
export const UserProfileResultSchema = Type.Object(
  {
    user_profile: Type.Object(
      {
        snowflake: SnowflakeText("The user's Discord ID, as the exact digits."),
        locale: Type.String({ description: 'BCP 47 language tag; en-US unless set.', example: 'en-US' }),
      },
      { additionalProperties: false },
    ),
    linked_accounts: Type.Array(
      Type.Object(
        {
          id: Type.String({
            pattern: '^[0-9a-f]{32}$',
            description: 'The Minecraft UUID, undashed lowercase.',
            example: '20934ef9488c465180a78f861586b4cf',
          }),
          snowflake: SnowflakeText('The Discord ID of the user it is linked to.'),
          is_primary: Type.Boolean({
            description: "Whether it is the user's primary account (exactly one is).",
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'The primary first, then in link order.' },
    ),
  },
  {
    additionalProperties: false,
    description: 'UserProfileResult: a Discord user and their Minecraft accounts.',
  },
);

/**
 * A well-formed BCP 47 tag as Unicode locale identifiers spell them (what Intl.getCanonicalLocales takes),
 * language `und` (undetermined) left out: the document's form of what the service accepts. The service checks
 * more than a pattern can (a variant or extension given twice is refused).
 */
const LOCALE_PATTERN =
  '^([A-TV-Za-tv-z][A-Za-z]{1,2}|[Uu][A-MO-Za-mo-z][A-Za-z]?|[Uu][Nn]([A-CE-Za-ce-z])?|[A-Za-z]{5,8})' +
  '(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*' +
  '(-[0-9A-WYZa-wyz](-[A-Za-z0-9]{2,8})+)*(-[Xx](-[A-Za-z0-9]{1,8})+)?$';

export const LocaleRequestSchema = Type.Object(
  {
    locale: Type.String({
      minLength: 1,
      maxLength: 64,
      // The service checks the tag itself (Intl.getCanonicalLocales); the document states its form.
      [OPENAPI_FORM]: { pattern: LOCALE_PATTERN },
      description:
        'A BCP 47 language tag (a language, then a script, region, variants, extensions, private use; not `und`); ' +
        'kept in canonical form (en-us becomes en-US).',
      example: 'pt-BR',
    }),
  },
  { additionalProperties: false, examples: [{ locale: 'pt-BR' }] },
);

export const LinkRequestSchema = Type.Object(
  {
    player: Type.String({
      pattern: PLAYER_PATTERN,
      'x-reason':
        'must be a Minecraft UUID (32 hex digits, dashed or not) or a username (1 to 16 letters, digits or _)',
      description: 'The Minecraft account: a UUID (dashed or not) or a username.',
      example: 'Notch',
    }),
    primary: Type.Optional(
      Type.Boolean({ description: 'Make it the primary account (the first account linked always is).' }),
    ),
    verify: Type.Optional(
      Type.Boolean({
        description:
          "Link only when the player's Hypixel profile (socialMedia.links.DISCORD) names the user's Discord username, case-insensitively.",
      }),
    ),
    username: Type.Optional(
      Text({
        minLength: 1,
        maxLength: 64,
        description:
          "The user's Discord username, for verification, used only when no interaction log has named the user.",
      }),
    ),
  },
  { additionalProperties: false, examples: [{ player: 'Minikloon', primary: true }] },
);
