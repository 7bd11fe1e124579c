import type { OptionalArguments } from './ground-truth-call.ts';
import type { ArgumentForm } from './map-function-doc.ts';

/**
 * Ground-truth calls of BFCL v4 (pinned commit) that the tool boundary rejects against their
 * own mapped docs, each explained by a quirk of the data. Found by validating every ground-truth
 * call of every single-turn and multi-turn category through `prepareToolCall`; the test
 * `ground-truth-call.test.ts` checks that this list is exactly the set of rejections.
 *
 * `call` is `<entry id>#<call index>` for single-turn entries and `<entry id>@<turn>.<index>`
 * for multi-turn ones. `only` names the optional-argument choice that shows the quirk (both when
 * absent); `form: 'native'` marks quirks that only the native Java/JS form shows.
 *
 * BFCL's own checker accepts several of these: it compares values with the ground truth, not
 * with the doc's enum, and when a value's type differs from the doc's it falls back to the
 * ground truth's type (`is_variable` in `ast_checker.type_checker`).
 */
export type GroundTruthQuirkKind =
  /** The doc: a string enum `"True"`/`"False"`/`"dontcare"`; the ground truth: a JSON boolean. */
  | 'boolean_for_string_enum'
  /** The doc: a string enum `"1"`, `"2"`, ...; the ground truth: a JSON number. */
  | 'number_for_string_enum'
  /** A value the doc's enum does not list (BFCL never checks enums). */
  | 'value_outside_enum'
  /** A parameter the doc does not declare. */
  | 'undeclared_parameter'
  /** `""` (may be left out) among the values of a parameter the doc requires. */
  | 'required_left_out'
  /** `[]` as the list of acceptable values (probably meant `[[]]`): nothing can match. */
  | 'empty_acceptable_values'
  /** A value of another type than the doc's (a string for an integer, `null` for a float, ...). */
  | 'value_of_wrong_type'
  /** Native Java/JS form: a variable or expression (`"textBuffer"`) in place of a literal. */
  | 'variable_for_literal';

export interface GroundTruthQuirk {
  call: string;
  kind: GroundTruthQuirkKind;
  /** What the boundary reports, and for which fields. */
  reason: 'missing_fields' | 'invalid_arguments';
  fields: string[];
  only?: OptionalArguments;
  form?: ArgumentForm;
  why: string;
}

const smokingString = (call: string, only?: OptionalArguments): GroundTruthQuirk => ({
  call,
  kind: 'boolean_for_string_enum',
  reason: 'invalid_arguments',
  fields: ['smoking_allowed'],
  ...(only ? { only } : {}),
  why: 'Hotels_4_SearchHotel.smoking_allowed is a string enum "True"/"False"/"dontcare"; the ground truth passes the boolean false',
});

const laundry = (call: string, value: boolean, only?: OptionalArguments): GroundTruthQuirk => ({
  call,
  kind: 'boolean_for_string_enum',
  reason: 'invalid_arguments',
  fields: ['in_unit_laundry'],
  ...(only ? { only } : {}),
  why: `Homes_2_FindHomeByArea.in_unit_laundry is a string enum "True"/"False"/"dontcare"; the ground truth passes the boolean ${value}`,
});

const requiredLeftOut = (call: string, field: string, doc: string): GroundTruthQuirk => ({
  call,
  kind: 'required_left_out',
  reason: 'missing_fields',
  fields: [field],
  only: 'omit',
  why: `${doc} requires "${field}", yet its acceptable values include "" (may be left out)`,
});

const variable = (call: string, fields: string[], example: string): GroundTruthQuirk => ({
  call,
  kind: 'variable_for_literal',
  reason: 'invalid_arguments',
  fields,
  form: 'native',
  why: `the ground truth names a variable or expression (${example}) where the doc's type wants a literal; BFCL's source-text form carries it as a string`,
});

export const GROUND_TRUTH_QUIRKS: readonly GroundTruthQuirk[] = [
  // live_simple
  {
    call: 'live_simple_106-63-0#0',
    kind: 'empty_acceptable_values',
    reason: 'missing_fields',
    fields: ['auto_loan_payment_start', 'bank_hours_start'],
    why: 'record requires every *_start list; the ground truth gives [] (no acceptable value) for auto_loan_payment_start and bank_hours_start',
  },
  {
    call: 'live_simple_112-68-0#0',
    kind: 'empty_acceptable_values',
    reason: 'missing_fields',
    fields: [
      'acc_routing_start',
      'atm_finder_start',
      'faq_link_accounts_start',
      'get_balance_start',
      'get_transactions_start',
    ],
    why: 'record requires every *_start list; the ground truth gives [] (no acceptable value) for five of them',
  },
  // live_multiple
  {
    call: 'live_multiple_87-38-4#0',
    kind: 'value_outside_enum',
    reason: 'invalid_arguments',
    fields: ['type'],
    why: 'list_servers.type allows all/postgres/openapi/graphql; the ground truth says "openai"',
  },
  {
    call: 'live_multiple_189-83-0#0',
    kind: 'undeclared_parameter',
    reason: 'invalid_arguments',
    fields: ['data.name', 'data.email'],
    why: 'sendHttpRequest.data declares param1/param2; the ground truth sends name and email',
  },
  smokingString('live_multiple_301-131-0#0', 'include'),
  smokingString('live_multiple_302-131-1#0', 'include'),
  smokingString('live_multiple_303-131-2#0', 'include'),
  smokingString('live_multiple_304-131-3#0', 'include'),
  {
    call: 'live_multiple_306-131-5#0',
    kind: 'value_of_wrong_type',
    reason: 'invalid_arguments',
    fields: ['smoking_allowed', 'number_of_rooms'],
    only: 'include',
    why: 'Hotels_4_SearchHotel: the ground truth passes the boolean false for the string enum smoking_allowed and "dontcare" for the integer number_of_rooms',
  },
  smokingString('live_multiple_307-131-6#0', 'include'),
  smokingString('live_multiple_308-131-7#0', 'include'),
  requiredLeftOut('live_multiple_68-29-0#0', 'port', 'add_postgres_server'),
  requiredLeftOut('live_multiple_69-30-0#0', 'port', 'add_postgres_server'),
  requiredLeftOut('live_multiple_77-35-1#0', 'port', 'add_postgres_server'),
  requiredLeftOut('live_multiple_114-44-1#0', 'port', 'add_postgres_server'),
  requiredLeftOut('live_multiple_144-56-0#0', 'perPage', 'get_sensor_readings_latest'),
  {
    call: 'live_multiple_507-149-4#0',
    kind: 'required_left_out',
    reason: 'missing_fields',
    fields: ['origin_airport'],
    why: 'Flights_4_SearchOnewayFlight requires origin_airport; its only acceptable value is "" (left out)',
  },
  {
    call: 'live_multiple_552-153-1#0',
    kind: 'boolean_for_string_enum',
    reason: 'invalid_arguments',
    fields: ['is_unisex'],
    why: 'Services_1_FindProvider.is_unisex is a string enum "True"/"False"/"dontcare"; the ground truth passes the boolean true',
  },
  {
    call: 'live_multiple_553-153-2#0',
    kind: 'boolean_for_string_enum',
    reason: 'invalid_arguments',
    fields: ['is_unisex'],
    only: 'include',
    why: 'Services_1_FindProvider.is_unisex is a string enum "True"/"False"/"dontcare"; the ground truth passes the boolean false',
  },
  {
    call: 'live_multiple_595-158-1#0',
    kind: 'number_for_string_enum',
    reason: 'invalid_arguments',
    fields: ['number_of_rooms'],
    why: 'Hotels_4_SearchHotel.number_of_rooms is a string enum "1"/"2"/"3"/"dontcare"; the ground truth passes the number 2',
  },
  {
    call: 'live_multiple_596-158-2#0',
    kind: 'number_for_string_enum',
    reason: 'invalid_arguments',
    fields: ['number_of_rooms'],
    why: 'Hotels_4_SearchHotel.number_of_rooms is a string enum "1"/"2"/"3"/"dontcare"; the ground truth passes the number 1',
  },
  laundry('live_multiple_731-167-2#0', true),
  laundry('live_multiple_732-167-3#0', false, 'include'),
  laundry('live_multiple_733-167-4#0', true),
  laundry('live_multiple_734-167-5#0', false, 'include'),
  laundry('live_multiple_735-167-6#0', true),
  laundry('live_multiple_736-167-7#0', false, 'include'),
  laundry('live_multiple_737-167-8#0', false, 'include'),
  {
    call: 'live_multiple_750-169-5#0',
    kind: 'value_outside_enum',
    reason: 'invalid_arguments',
    fields: ['genre'],
    why: 'Media_3_FindMovies.genre has no "Any"; the ground truth says "Any"',
  },
  {
    call: 'live_multiple_756-169-11#0',
    kind: 'value_outside_enum',
    reason: 'invalid_arguments',
    fields: ['genre'],
    why: 'Media_3_FindMovies.genre lists "Horror"; the ground truth says "horror" (BFCL compares strings case-blind)',
  },
  requiredLeftOut('live_multiple_834-178-9#0', 'track', 'Music_3_PlayMedia'),
  {
    call: 'live_multiple_835-178-10#0',
    kind: 'value_outside_enum',
    reason: 'invalid_arguments',
    fields: ['genre'],
    why: 'Music_3_LookupMusic.genre has "Reggae" but no "Reggaeton"; the ground truth says "Reggaeton"',
  },
  {
    call: 'live_multiple_862-181-3#0',
    kind: 'undeclared_parameter',
    reason: 'invalid_arguments',
    fields: ['journey_start_time'],
    why: 'Trains_1_FindTrains declares no journey_start_time; the ground truth passes "09:00" for it',
  },
  {
    call: 'live_multiple_871-182-8#0',
    kind: 'value_outside_enum',
    reason: 'invalid_arguments',
    fields: ['genre'],
    why: 'Movies_1_FindMovies.genre has no "Play"; the ground truth says "Play"',
  },
  requiredLeftOut('live_multiple_905-186-2#0', 'number_of_adults', 'Trains_1_GetTrainTickets'),
  requiredLeftOut('live_multiple_906-186-3#0', 'number_of_adults', 'Trains_1_GetTrainTickets'),
  {
    call: 'live_multiple_947-197-0#0',
    kind: 'value_outside_enum',
    reason: 'invalid_arguments',
    fields: ['duration'],
    why: 'set_countdown.duration allows 1 hour/30 minutes/1 hour 30 minutes/45 minutes/2 hours; the ground truth says "5 minutes"',
  },
  {
    call: 'live_multiple_964-207-0#0',
    kind: 'undeclared_parameter',
    reason: 'missing_fields',
    fields: ['statement', 'question'],
    why: 'transfer_to_human_agent takes a required "statement"; the ground truth passes "question" instead',
  },
  // live_parallel_multiple
  {
    call: 'live_parallel_multiple_2-2-0#1',
    kind: 'value_outside_enum',
    reason: 'invalid_arguments',
    fields: ['command'],
    why: 'ControlAppliance.execute.command is an enum of three Korean commands; the second call\'s command "침실, 공기청정기, 중지" is not one of them',
  },
  // simple_python
  requiredLeftOut('simple_python_17#0', 'formatted', 'get_prime_factors'),
  requiredLeftOut('simple_python_200#0', 'fuel_efficiency', 'calculate_emissions'),
  {
    call: 'simple_python_307#0',
    kind: 'value_of_wrong_type',
    reason: 'invalid_arguments',
    fields: ['venue'],
    only: 'include',
    why: 'game_result.get_winner.venue is a string; the ground truth lists the boolean true (or leaving it out)',
  },
  // parallel
  requiredLeftOut('parallel_88#0', 'initial_velocity', 'calculate_final_speed'),
  {
    call: 'parallel_152#0',
    kind: 'value_of_wrong_type',
    reason: 'invalid_arguments',
    fields: ['mod'],
    only: 'include',
    why: 'math.power.mod is a float with no None default; the ground truth lists None (or leaving it out)',
  },
  {
    call: 'parallel_152#1',
    kind: 'value_of_wrong_type',
    reason: 'invalid_arguments',
    fields: ['mod'],
    only: 'include',
    why: 'math.power.mod is a float with no None default; the ground truth lists None (or leaving it out)',
  },
  // parallel_multiple
  {
    call: 'parallel_multiple_12#1',
    kind: 'undeclared_parameter',
    reason: 'invalid_arguments',
    fields: ['permeability'],
    only: 'include',
    why: 'calculate_voltage_difference declares no permeability; the ground truth lists 0.1 for it (or leaving it out)',
  },
  {
    call: 'parallel_multiple_21#1',
    kind: 'value_of_wrong_type',
    reason: 'invalid_arguments',
    fields: ['x', 'y'],
    why: 'linear_regression_fit.x and .y are float arrays; the ground truth passes the Python expressions "data[\'sales\']" and "data[\'future_sales\']"',
  },
  {
    call: 'parallel_multiple_26#1',
    kind: 'undeclared_parameter',
    reason: 'invalid_arguments',
    fields: ['type'],
    only: 'include',
    why: 'bank.calculate_balance declares no "type" (only its transactions do); the ground truth lists "credit" for it (or leaving it out)',
  },
  requiredLeftOut('parallel_multiple_87#2', 'initial_velocity', 'kinematics.distance'),
  {
    call: 'parallel_multiple_94#0',
    kind: 'value_of_wrong_type',
    reason: 'invalid_arguments',
    fields: ['elements.0', 'elements.1', 'elements.2', 'elements.3', 'elements.4'],
    why: 'sort_list.elements is an integer array; the ground truth sorts fruit names',
  },
  requiredLeftOut('parallel_multiple_119#2', 'league_name', 'league_stats.get_top_scorer'),
  // multi-turn: the ticket ids of initial_config are strings, close_ticket wants an integer
  ...[
    'multi_turn_base_173@3.0',
    'multi_turn_miss_func_173@4.0',
    'multi_turn_miss_param_173@4.0',
    'multi_turn_long_context_173@3.0',
  ].map(
    (call): GroundTruthQuirk => ({
      call,
      kind: 'value_of_wrong_type',
      reason: 'invalid_arguments',
      fields: ['ticket_id'],
      why: "close_ticket.ticket_id is an integer; the ground truth closes 'ticket_001', the string id its initial_config gives the ticket",
    }),
  ),
  // Native Java/JavaScript form only
  variable(
    'simple_java_26#0',
    ['resultSetType', 'concurrency', 'holdability'],
    'ResultSet.TYPE_SCROLL_INSENSITIVE for an int',
  ),
  variable('simple_java_35#0', ['destination'], '"user:online:both" for a String[]'),
  variable('simple_java_38#0', ['filteredSource'], 'docFields for a HashMap'),
  variable('simple_java_45#0', ['environ'], 'envVariables for a HashMap'),
  variable('simple_java_58#0', ['values'], 'userProfile for a HashMap'),
  variable('simple_java_69#0', ['buf'], 'durations for an Array'),
  variable('simple_java_72#0', ['ch'], 'textBuffer for a char[]'),
  variable('simple_java_82#0', ['args'], 'testArgs for an Array'),
  variable('simple_java_87#0', ['suspendPolicy'], 'EVENT_THREAD for an int'),
  variable('simple_java_88#0', ['suspendPolicy'], 'EventRequest.SUSPEND_ALL for an int'),
  variable(
    'simple_javascript_5#0',
    ['store.initialState', 'store.reducers'],
    'initialStateObject for a dict',
  ),
  variable('simple_javascript_9#0', ['jsonPayload'], 'responseData for a dict'),
  variable('simple_javascript_11#0', ['items'], 'myItemList for an array'),
  variable('simple_javascript_15#0', ['labels', 'data', 'chartLayout'], 'axisLabelsArray for an array'),
  variable('simple_javascript_19#0', ['property', 'textures'], 'materialProps for a dict'),
  variable('simple_javascript_32#0', ['queue'], 'fileWatchQueue for an array'),
  variable('simple_javascript_37#0', ['statements'], 'shapeStatements for an array'),
  variable('simple_javascript_39#0', ['parameters'], 'funcParameters for an array'),
];

/** The quirks that apply to one way of building ground-truth calls. */
export function quirksFor(
  optional: OptionalArguments,
  form: ArgumentForm = 'source-text',
): GroundTruthQuirk[] {
  return GROUND_TRUTH_QUIRKS.filter(
    (quirk) =>
      (quirk.only === undefined || quirk.only === optional) &&
      (quirk.form === undefined || quirk.form === form),
  );
}
