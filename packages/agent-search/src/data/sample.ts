/**
 * @module data/sample
 * The embedded SAMPLE data set, so the service answers offline. Everything here is FICTIONAL:
 * the two resort operators ("Starfall Parks" and "Tidewell Resorts"), their parks, hotels and
 * prices, every place, deal and event. Only the two area centres and the coordinates are real
 * map positions (central Orlando, Florida and central Lisbon, Portugal), chosen so distances and
 * time zones behave like real ones. Every answer built from it carries {@link SAMPLE_SOURCE}.
 *
 * Events are dated relative to an anchor (UTC midnight): by default the day the provider is
 * created, so a demo always has upcoming events; tests pass a fixed anchor.
 */
import type { Area, DataProvider, Deal, EventItem, Place, ResortOperator, SourceInfo } from '../answers/types.js';

export const SAMPLE_SOURCE: SourceInfo = Object.freeze({
  kind: 'sample',
  name: 'embedded sample data set',
  note:
    'SAMPLE DATA: every place, deal, event, resort operator and price here is fictional, made up to ' +
    'demonstrate the API offline. Do not rely on it for real plans or bookings.',
});

export const SAMPLE_AREAS: readonly Area[] = [
  {
    id: 'orlando',
    name: 'Orlando (sample)',
    timezone: 'America/New_York',
    country_code: 'us',
    state: 'Florida',
    lat: 28.5383,
    lon: -81.3792,
  },
  {
    id: 'lisbon',
    name: 'Lisbon (sample)',
    timezone: 'Europe/Lisbon',
    country_code: 'pt',
    state: 'Lisboa',
    lat: 38.7223,
    lon: -9.1393,
  },
];

type PlaceRow = [
  id: string,
  name: string,
  category: string,
  lat: number,
  lon: number,
  opening_hours: string,
  price_level: 1 | 2 | 3 | 4,
  tags: string,
  description: string,
  adults_only?: boolean,
];

const ORLANDO_PLACES: PlaceRow[] = [
  ['orl-kumo-ramen', 'Kumo Ramen House', 'restaurant', 28.5412, -81.3781, 'Mo-Su 11:30-22:00', 2, 'ramen noodles japanese soup', 'Rich tonkotsu and miso ramen bowls, vegetarian broth on request.'],
  ['orl-lakeside-coffee', 'Lakeside Coffee Roasters', 'cafe', 28.5431, -81.3735, 'Mo-Fr 07:00-18:00; Sa,Su 08:00-16:00', 1, 'coffee espresso breakfast pastries wifi', 'Small-batch espresso by the lake, pastries baked each morning.'],
  ['orl-cypress-bike', 'Cypress Street Bike Repair', 'shop', 28.5356, -81.3829, 'Mo-Fr 09:00-17:00; PH off', 1, 'bicycle repair rental cycling', 'Bike repairs while you wait and day rentals for the lake trail.'],
  ['orl-moonlit-jazz', 'Moonlit Sunday Jazz Bar', 'bar', 28.5398, -81.3802, 'Su 18:00-23:00', 3, 'jazz live music cocktails nightlife', 'Live jazz trio on Sunday nights only, cocktails and small plates.', true],
  ['orl-night-owl-diner', 'Night Owl Diner', 'restaurant', 28.5460, -81.3850, '24/7', 1, 'diner breakfast burgers late night pancakes', 'Pancakes, burgers and bottomless coffee at any hour.'],
  ['orl-orange-grove-museum', 'Orange Grove Heritage Museum', 'museum', 28.5515, -81.3650, 'Tu-Sa 10:00-17:00; Su 12:00-17:00; PH off', 2, 'museum history citrus family kids', 'The story of the region\'s citrus groves, with a hands-on kids\' corner.'],
  ['orl-gator-pier', 'Gator Pier Seafood Shack', 'restaurant', 28.5305, -81.3901, 'Mo-Th 11:00-21:00; Fr,Sa 11:00-23:00; Su 12:00-20:00', 2, 'seafood fish shrimp tacos waterfront', 'Fried shrimp baskets and fish tacos on a pier over the water.'],
  ['orl-little-saigon-pho', 'Little Saigon Pho Kitchen', 'restaurant', 28.5530, -81.3690, 'Mo-Sa 10:00-21:00', 1, 'pho vietnamese noodles soup banh mi', 'Beef and chicken pho, banh mi sandwiches, iced coffee.'],
  ['orl-skyline-rooftop', 'Skyline Rooftop Lounge', 'bar', 28.5401, -81.3768, 'We-Sa 17:00-24:00', 4, 'rooftop cocktails view nightlife', 'Cocktails with a view over the downtown skyline.', true],
  ['orl-splash-pad', 'Lake Eola Splash Pad (sample)', 'park', 28.5436, -81.3722, 'Mo-Su 09:00-19:00', 1, 'playground water kids family free outdoor', 'Free splash pad and playground for kids beside the lake path.'],
  ['orl-bookworm', 'Bookworm & Bean', 'shop', 28.5479, -81.3611, 'Mo-Sa 09:00-20:00; Su 10:00-18:00', 1, 'books bookshop coffee reading kids', 'Independent bookshop with a children\'s reading corner and a coffee bar.'],
  ['orl-science-dome', 'Science Dome Planetarium', 'museum', 28.5721, -81.3680, 'Tu-Su 10:00-18:00; Fr 10:00-21:00', 2, 'science planetarium stars kids family museum', 'Star shows every hour and an interactive science hall for families.'],
  ['orl-firepit-bbq', 'Firepit Smokehouse BBQ', 'restaurant', 28.5260, -81.3950, 'Mo-Su 11:00-22:00', 2, 'bbq barbecue brisket ribs smokehouse', 'Slow-smoked brisket and ribs, family-style platters.'],
  ['orl-verde-vegan', 'Verde Vegan Kitchen', 'restaurant', 28.5490, -81.3760, 'Mo-Fr 11:00-20:00; Sa 10:00-20:00', 2, 'vegan vegetarian plant-based salads bowls', 'Plant-based bowls, salads and smoothies.'],
  ['orl-tide-pool-aquarium', 'Tide Pool Mini Aquarium', 'attraction', 28.5200, -81.4010, 'Mo-Su 09:00-17:00; PH 10:00-15:00', 2, 'aquarium fish sea turtles kids family', 'A small aquarium with touch pools and a rescued sea turtle.'],
  ['orl-arcade-alley', 'Arcade Alley', 'attraction', 28.5375, -81.3805, 'Mo-Th 12:00-22:00; Fr,Sa 12:00-24:00; Su 12:00-20:00', 2, 'arcade games bowling family kids', 'Retro arcade games, mini bowling and air hockey.'],
  ['orl-sunrise-yoga', 'Sunrise Yoga Deck', 'fitness', 28.5447, -81.3700, 'Mo-Fr 06:00-09:00,17:00-20:00; Sa 07:00-11:00', 1, 'yoga fitness wellness outdoor', 'Open-air yoga classes at sunrise and after work.'],
  ['orl-starfall-gate', 'Starfall Kingdom Main Gate (sample)', 'theme park', 28.3772, -81.5707, 'Mo-Su 08:00-22:00', 4, 'theme park rides fireworks family kids starfall', 'Entrance to the fictional Starfall Kingdom park of the sample operator Starfall Parks.'],
  ['orl-tidewell-gate', 'Tidewell Harbor Park Gate (sample)', 'theme park', 28.4722, -81.4678, 'Mo-Su 09:00-21:00', 4, 'theme park water rides roller coasters family kids tidewell', 'Entrance to the fictional Tidewell Harbor Park of the sample operator Tidewell Resorts.'],
  ['orl-cuban-corner', 'Cuban Corner Cafe', 'cafe', 28.5330, -81.3760, 'Mo-Sa 07:00-15:00', 1, 'cuban sandwich coffee breakfast', 'Pressed Cuban sandwiches and cafecito.'],
];

const LISBON_PLACES: PlaceRow[] = [
  ['lis-pasteis-do-rio', 'Pastelaria do Rio', 'cafe', 38.6975, -9.2030, 'Mo-Su 08:00-23:00', 1, 'pastries custard tarts coffee bakery', 'Custard tarts warm from the oven, by the river.'],
  ['lis-tasca-alfama', 'Tasca da Alfama Velha', 'restaurant', 38.7115, -9.1305, 'Tu-Sa 12:00-15:00,19:00-23:00', 2, 'portuguese fado grilled sardines wine', 'Grilled sardines and fado singers in a tiny old-town tavern.'],
  ['lis-azulejo-museum', 'Museu dos Azulejos de Amostra', 'museum', 38.7250, -9.1135, 'Tu-Su 10:00-18:00; PH off', 2, 'museum tiles azulejo art history', 'Five centuries of painted tiles (a fictional museum for the sample).'],
  ['lis-tram-28-stop', 'Miradouro da Colina', 'viewpoint', 38.7139, -9.1334, '24/7', 1, 'viewpoint view free outdoor sunset', 'A free hilltop viewpoint over the river and the old town.'],
  ['lis-ramen-bairro', 'Bairro Ramen Bar', 'restaurant', 38.7130, -9.1440, 'Mo-Sa 12:00-23:00', 2, 'ramen noodles japanese', 'Ramen and gyoza in the nightlife quarter.'],
  ['lis-oceanario-mini', 'Aquario do Tejo (sample)', 'attraction', 38.7633, -9.0937, 'Mo-Su 10:00-19:00', 3, 'aquarium fish ocean kids family', 'A fictional riverside aquarium with a big ocean tank.'],
  ['lis-livraria', 'Livraria Antiga do Chiado', 'shop', 38.7107, -9.1420, 'Mo-Sa 09:00-19:00; Su 11:00-18:00', 1, 'books bookshop history', 'A very old bookshop with narrow, creaking stairs.'],
  ['lis-bica-bar', 'Bica Night Bar', 'bar', 38.7090, -9.1470, 'Th-Sa 21:00-04:00', 2, 'cocktails nightlife music late', 'Late cocktails on a steep street; open until 4 in the morning.', true],
  ['lis-mercado', 'Mercado da Ribeira Sample Hall', 'market', 38.7069, -9.1459, 'Mo-Su 10:00-24:00', 2, 'food hall market seafood wine', 'Food hall with counters from local cooks.'],
  ['lis-castle-garden', 'Jardim do Castelo', 'park', 38.7139, -9.1300, 'Mo-Su 09:00-21:00', 1, 'garden park peacocks view kids family outdoor', 'Castle garden with peacocks and wide views.'],
  ['lis-surf-school', 'Escola de Surf Atlantica', 'fitness', 38.6920, -9.3200, 'Mo-Su 09:00-18:00', 2, 'surf lessons beach outdoor', 'Beginner surf lessons, boards and wetsuits included.'],
  ['lis-vinho-verde', 'Casa do Vinho', 'bar', 38.7160, -9.1410, 'Mo-Sa 17:00-24:00', 3, 'wine tasting port bar', 'Port and regional wine tastings.', true],
  ['lis-belem-tower', 'Torre de Belem (sample entry)', 'landmark', 38.6916, -9.2160, 'Tu-Su 10:00-17:30; PH off', 2, 'landmark history tower river', 'Riverside tower; sample hours only.'],
  ['lis-prego', 'Prego Rapido', 'restaurant', 38.7200, -9.1460, 'Mo-Fr 11:00-16:00', 1, 'steak sandwich lunch quick', 'Steak sandwiches for a quick lunch on weekdays.'],
  ['lis-gelataria', 'Gelataria Lua', 'cafe', 38.7120, -9.1395, 'Mo-Su 11:00-22:00', 1, 'ice cream gelato dessert kids', 'Gelato with Portuguese fruit flavours.'],
  ['lis-ciencia-viva', 'Centro de Ciencia Infantil', 'museum', 38.7625, -9.0960, 'Tu-Fr 10:00-18:00; Sa,Su 11:00-19:00', 2, 'science museum kids family hands-on', 'Hands-on science for children.'],
  ['lis-cervejaria', 'Cervejaria do Cais', 'restaurant', 38.7240, -9.1500, 'Mo-Su 12:00-24:00', 3, 'seafood beer prawns crab', 'Seafood platters and cold beer.'],
  ['lis-lx-bikes', 'LX Bikes Rental', 'shop', 38.7055, -9.1600, 'Mo-Fr 09:00-17:00; PH off', 1, 'bicycle rental cycling riverside', 'Bike rentals for the riverside path.'],
  ['lis-fado-house', 'Casa de Fado Saudade', 'music', 38.7118, -9.1290, 'We-Su 20:00-24:00', 3, 'fado live music dinner', 'Dinner with live fado, four nights a week.'],
  ['lis-vegan-horta', 'Horta Vegana', 'restaurant', 38.7280, -9.1450, 'Mo-Sa 12:00-15:00,19:00-22:00', 2, 'vegan vegetarian plant-based', 'Vegan Portuguese home cooking.'],
];

function placesOf(area: string, rows: readonly PlaceRow[]): Place[] {
  return rows.map(([id, name, category, lat, lon, opening_hours, price_level, tags, description, adults_only]) => ({
    id,
    name,
    area,
    category,
    description,
    tags: tags.split(' '),
    lat,
    lon,
    opening_hours,
    price_level,
    ...(adults_only ? { adults_only: true } : {}),
  }));
}

export const SAMPLE_PLACES: readonly Place[] = [...placesOf('orlando', ORLANDO_PLACES), ...placesOf('lisbon', LISBON_PLACES)];

export const SAMPLE_DEALS: readonly Deal[] = (
  [
    // [id, title, area, place_id, operator_id, category, price, regular, currency, tags, description, resident_only, adults_only]
    ['deal-kumo-lunch', 'Ramen lunch set', 'orlando', 'orl-kumo-ramen', undefined, 'food', '12.50', '17.00', 'USD', 'ramen lunch noodles', 'Any ramen bowl with gyoza and a drink, weekdays before 3 pm.'],
    ['deal-lakeside-bogo', 'Second coffee free', 'orlando', 'orl-lakeside-coffee', undefined, 'food', '4.50', '9.00', 'USD', 'coffee espresso', 'Buy one espresso drink, get the second free.'],
    ['deal-bike-day', 'Bike day rental', 'orlando', 'orl-cypress-bike', undefined, 'outdoor', '18.00', '30.00', 'USD', 'bicycle rental cycling', 'Full-day city bike with lock and helmet.'],
    ['deal-bbq-family', 'Family BBQ platter', 'orlando', 'orl-firepit-bbq', undefined, 'food', '49.00', '68.00', 'USD', 'bbq family platter kids', 'Platter for four with two sides and kids\' drinks.'],
    ['deal-science-family', 'Planetarium family pass', 'orlando', 'orl-science-dome', undefined, 'attraction', '39.00', '56.00', 'USD', 'planetarium family kids science', 'Two adults and up to three kids, one star show included.'],
    ['deal-aquarium-resident', 'Aquarium resident weekday entry', 'orlando', 'orl-tide-pool-aquarium', undefined, 'attraction', '9.00', '16.00', 'USD', 'aquarium kids resident', 'Weekday entry for Florida residents with ID.', true],
    ['deal-rooftop-happy-hour', 'Rooftop happy hour', 'orlando', 'orl-skyline-rooftop', undefined, 'nightlife', '8.00', '14.00', 'USD', 'cocktails happy hour', 'Half-price cocktails 5-7 pm.', false, true],
    ['deal-arcade-unlimited', 'Arcade unlimited play', 'orlando', 'orl-arcade-alley', undefined, 'attraction', '20.00', '35.00', 'USD', 'arcade games kids family', 'Two hours of unlimited games.'],
    ['deal-starfall-dining', 'Starfall Kingdom dining plan add-on', 'orlando', undefined, 'starfall', 'resort', '35.00', '45.00', 'USD', 'starfall theme park dining meals', 'One quick-service meal and one snack per park day, per person (sample).'],
    ['deal-starfall-resident-fall', 'Starfall resident fall weekday ticket', 'orlando', undefined, 'starfall', 'resort', '79.00', '99.00', 'USD', 'starfall theme park resident ticket', 'Weekday one-day ticket for residents (sample).', true],
    ['deal-tidewell-fastlane', 'Tidewell FastLane pass', 'orlando', undefined, 'tidewell', 'resort', '59.00', '79.00', 'USD', 'tidewell theme park skip line rides', 'Skip the regular queue once per ride for a day (sample).'],
    ['deal-tidewell-kids-eat', 'Tidewell kids eat free', 'orlando', undefined, 'tidewell', 'resort', '0.00', '15.00', 'USD', 'tidewell kids meals family', 'One free kids\' meal per paying adult at park restaurants (sample).'],
    ['deal-pho-combo', 'Pho and banh mi combo', 'orlando', 'orl-little-saigon-pho', undefined, 'food', '13.00', '18.00', 'USD', 'pho vietnamese lunch', 'Small pho plus half banh mi.'],
    ['deal-pasteis-box', 'Six custard tarts to go', 'lisbon', 'lis-pasteis-do-rio', undefined, 'food', '6.00', '8.40', 'EUR', 'pastries custard tarts bakery', 'A box of six warm custard tarts.'],
    ['deal-fado-dinner', 'Fado dinner for two', 'lisbon', 'lis-fado-house', undefined, 'music', '70.00', '96.00', 'EUR', 'fado dinner live music', 'Three-course dinner for two with the show.', false, true],
    ['deal-surf-lesson', 'Beginner surf lesson', 'lisbon', 'lis-surf-school', undefined, 'outdoor', '25.00', '40.00', 'EUR', 'surf lesson beach', 'Two-hour group lesson with equipment.'],
    ['deal-wine-flight', 'Port wine flight', 'lisbon', 'lis-vinho-verde', undefined, 'nightlife', '12.00', '18.00', 'EUR', 'wine port tasting', 'Four port wines with cheese.', false, true],
    ['deal-azulejo-resident', 'Azulejo museum free Sunday for residents', 'lisbon', 'lis-azulejo-museum', undefined, 'attraction', '0.00', '8.00', 'EUR', 'museum tiles resident', 'Free entry on Sunday mornings for Lisbon residents.', true],
    ['deal-lx-bikes-halfday', 'Half-day riverside bike', 'lisbon', 'lis-lx-bikes', undefined, 'outdoor', '8.00', '12.00', 'EUR', 'bicycle rental riverside', 'Four hours on a city bike.'],
    ['deal-ciencia-family', 'Science centre family ticket', 'lisbon', 'lis-ciencia-viva', undefined, 'attraction', '22.00', '32.00', 'EUR', 'science kids family museum', 'Two adults and two children.'],
  ] as const
).map(
  ([id, title, area, place_id, operator_id, category, price, regular_price, currency, tags, description, resident_only, adults_only]: readonly [
    string, string, string, string | undefined, string | undefined, string, string, string, string, string, string, boolean?, boolean?,
  ]): Deal => ({
    id,
    title,
    area,
    ...(place_id ? { place_id } : {}),
    ...(operator_id ? { operator_id } : {}),
    category,
    description,
    tags: tags.split(' '),
    price,
    regular_price,
    currency,
    ...(resident_only ? { resident_only: true } : {}),
    ...(adults_only ? { adults_only: true } : {}),
  }),
);

type EventRow = [
  id: string,
  title: string,
  area: string,
  venue: string,
  category: string,
  lat: number,
  lon: number,
  /** Whole days after the anchor (negative: before). */
  day: number,
  /** Start, hours after that day's UTC midnight. */
  hourUtc: number,
  hours: number,
  price: string,
  tags: string,
  description: string,
  adults_only?: boolean,
];

/** Sample events, relative to the anchor day; spread over -58..+58 days. */
export const SAMPLE_EVENT_ROWS: readonly EventRow[] = [
  ['ev-jazz-lake', 'Jazz by the Lake', 'orlando', 'Lake Eola bandshell (sample)', 'music', 28.5433, -81.3710, 2, 23, 3, '0.00', 'jazz live music free outdoor', 'Free evening jazz concert by the lake.'],
  ['ev-food-trucks', 'Food Truck Friday', 'orlando', 'Downtown plaza (sample)', 'food', 28.5410, -81.3790, 5, 22, 4, '0.00', 'food trucks street food family', 'Twenty food trucks and live DJs.'],
  ['ev-starfall-fireworks', 'Starfall Kingdom Fireworks Gala', 'orlando', 'Starfall Kingdom (sample)', 'theme park', 28.3772, -81.5707, 9, 1, 2, '25.00', 'starfall fireworks theme park family kids', 'Extended fireworks night; separate ticket (sample).'],
  ['ev-tidewell-halloween', 'Tidewell Spooky Nights', 'orlando', 'Tidewell Harbor Park (sample)', 'theme park', 28.4722, -81.4678, 20, 23, 5, '69.00', 'tidewell halloween haunted houses theme park', 'Haunted houses and scare zones (sample).', true],
  ['ev-farmers-market', 'Lakeside Farmers Market', 'orlando', 'Lake Eola path (sample)', 'market', 28.5440, -81.3725, -3, 14, 5, '0.00', 'market farmers food local', 'Local produce and crafts every Sunday.'],
  ['ev-ramen-fest', 'Orlando Ramen Festival', 'orlando', 'Exhibition hall (sample)', 'food', 28.5420, -81.3850, 12, 16, 8, '15.00', 'ramen noodles festival food japanese', 'Ten ramen shops, one ticket, unlimited tasting cups.'],
  ['ev-science-night', 'Science Night for Kids', 'orlando', 'Science Dome Planetarium', 'family', 28.5721, -81.3680, 6, 22, 3, '12.00', 'science kids family planetarium', 'Experiments and telescope viewing for kids.'],
  ['ev-bbq-cookoff', 'Smokehouse BBQ Cook-off', 'orlando', 'Firepit Smokehouse BBQ', 'food', 28.5260, -81.3950, 33, 17, 6, '10.00', 'bbq barbecue contest food', 'Pitmasters compete; tasting tickets at the gate.'],
  ['ev-5k-run', 'Lake Loop 5K Fun Run', 'orlando', 'Lake Eola path (sample)', 'sport', 28.5436, -81.3722, 45, 12, 3, '30.00', 'running 5k sport outdoor', 'Morning fun run around the lake.'],
  ['ev-comedy', 'Late Night Comedy Showcase', 'orlando', 'Skyline Rooftop Lounge', 'comedy', 28.5401, -81.3768, 1, 2, 2, '20.00', 'comedy stand-up nightlife', 'Five comics, one rooftop.', true],
  ['ev-film-park', 'Movies in the Park', 'orlando', 'Lake Eola lawn (sample)', 'film', 28.5430, -81.3740, 16, 0, 2, '0.00', 'film movie outdoor family free', 'A family film on a big screen.'],
  ['ev-art-walk', 'Downtown Art Walk', 'orlando', 'Downtown galleries (sample)', 'art', 28.5400, -81.3780, -20, 22, 3, '0.00', 'art galleries walk free', 'Galleries open late with live music.'],
  ['ev-tidewell-summer', 'Tidewell Summer Splash Week', 'orlando', 'Tidewell Harbor Park (sample)', 'theme park', 28.4722, -81.4678, 55, 13, 10, '0.00', 'tidewell water rides theme park family', 'Extra water shows, included with park entry (sample).'],
  ['ev-starfall-parade', 'Starfall Lantern Parade', 'orlando', 'Starfall Kingdom (sample)', 'theme park', 28.3772, -81.5707, 27, 0, 1, '0.00', 'starfall parade theme park family kids', 'Night parade, included with park entry (sample).'],
  ['ev-orchestra', 'Symphony Under the Stars', 'orlando', 'Lake Eola bandshell (sample)', 'music', 28.5433, -81.3710, -45, 23, 2, '35.00', 'orchestra classical music outdoor', 'A classical evening concert.'],
  ['ev-fado-night', 'Noite de Fado', 'lisbon', 'Casa de Fado Saudade', 'music', 38.7118, -9.1290, 3, 20, 3, '30.00', 'fado live music portuguese', 'Three fado singers, one night.'],
  ['ev-santos', 'Sardine Street Festival', 'lisbon', 'Alfama streets (sample)', 'festival', 38.7115, -9.1305, 24, 17, 8, '0.00', 'sardines festival street food music', 'Grilled sardines, street music and dancing.'],
  ['ev-tile-workshop', 'Tile Painting Workshop', 'lisbon', 'Museu dos Azulejos de Amostra', 'workshop', 38.7250, -9.1135, 8, 10, 3, '45.00', 'tiles azulejo painting workshop art', 'Paint your own tile, fired and ready next week.'],
  ['ev-surf-contest', 'Atlantic Surf Open', 'lisbon', 'Carcavelos beach (sample)', 'sport', 38.6790, -9.3350, 40, 9, 9, '0.00', 'surf contest beach sport', 'Regional surf contest, free to watch.'],
  ['ev-wine-fair', 'Port & Wine Fair', 'lisbon', 'Mercado da Ribeira Sample Hall', 'food', 38.7069, -9.1459, 14, 16, 6, '15.00', 'wine port tasting fair', 'Tastings from thirty producers.', true],
  ['ev-kids-science', 'Robot Building for Kids', 'lisbon', 'Centro de Ciencia Infantil', 'family', 38.7625, -9.0960, 4, 14, 2, '10.00', 'robots science kids family workshop', 'Build and race a small robot.'],
  ['ev-book-fair', 'Lisbon Book Fair (sample)', 'lisbon', 'Parque Eduardo VII (sample)', 'books', 38.7290, -9.1540, -10, 12, 10, '0.00', 'books fair reading', 'Hundreds of publishers\' stands in the park.'],
  ['ev-tram-tour', 'Night Tram History Tour', 'lisbon', 'Miradouro da Colina', 'tour', 38.7139, -9.1334, 11, 20, 2, '22.00', 'tram tour history night', 'A guided evening ride through the old town.'],
  ['ev-jazz-lisbon', 'Jazz no Jardim', 'lisbon', 'Jardim do Castelo', 'music', 38.7139, -9.1300, 30, 18, 3, '12.00', 'jazz live music garden outdoor', 'Garden jazz at sunset.'],
  ['ev-film-lisbon', 'Open-air Cinema by the River', 'lisbon', 'Riverside lawn (sample)', 'film', 38.7000, -9.1700, -30, 21, 2, '5.00', 'film movie outdoor river', 'Classic films on the riverside.'],
  ['ev-marathon', 'Lisbon River Half Marathon', 'lisbon', 'Riverside start line (sample)', 'sport', 38.6960, -9.2100, 58, 8, 4, '40.00', 'running half marathon sport', 'A flat half marathon along the river.'],
  ['ev-ramen-popup', 'Ramen Pop-up Night', 'lisbon', 'Bairro Ramen Bar', 'food', 38.7130, -9.1440, 7, 19, 4, '18.00', 'ramen noodles popup japanese', 'A guest chef from Tokyo for one night.'],
  ['ev-market-christmas', 'Winter Craft Market', 'lisbon', 'Mercado da Ribeira Sample Hall', 'market', 38.7069, -9.1459, -58, 11, 8, '0.00', 'market crafts gifts winter', 'Handmade gifts and hot chestnuts.'],
  ['ev-castle-night', 'Castle by Lantern Light', 'lisbon', 'Jardim do Castelo', 'tour', 38.7139, -9.1300, 19, 19, 3, '15.00', 'castle tour night history family', 'A lantern-lit evening tour.'],
  ['ev-dj-rooftop', 'Rooftop DJ Sessions', 'lisbon', 'Bica Night Bar', 'nightlife', 38.7090, -9.1470, 1, 22, 5, '10.00', 'dj music nightlife', 'Guest DJs until late.', true],
];

export const SAMPLE_RESORTS: readonly ResortOperator[] = [
  {
    id: 'starfall',
    name: 'Starfall Parks (fictional sample operator)',
    area: 'orlando',
    park_name: 'Starfall Kingdom',
    currency: 'USD',
    child_ages: '3-9',
    tickets: [
      { days: 1, adult: '119.00', child: '109.00', resident_adult: '99.00', resident_child: '89.00' },
      { days: 2, adult: '229.00', child: '209.00', resident_adult: '189.00', resident_child: '169.00' },
      { days: 3, adult: '329.00', child: '299.00', resident_adult: '269.00', resident_child: '239.00' },
      { days: 4, adult: '419.00', child: '379.00', resident_adult: '339.00', resident_child: '299.00' },
      { days: 5, adult: '489.00', child: '439.00', resident_adult: '399.00', resident_child: '349.00' },
      { days: 6, adult: '549.00', child: '489.00', resident_adult: '449.00', resident_child: '389.00' },
      { days: 7, adult: '599.00', child: '529.00', resident_adult: '489.00', resident_child: '419.00' },
    ],
    extra_day: { adult: '45.00', child: '40.00', resident_adult: '35.00', resident_child: '30.00' },
    hotels: [
      { id: 'starfall-comet-inn', name: 'Comet Value Inn', tier: 'budget', nightly: '139.00', room_sleeps: 4 },
      { id: 'starfall-nebula-lodge', name: 'Nebula Lodge', tier: 'standard', nightly: '229.00', room_sleeps: 4 },
      { id: 'starfall-aurora-grand', name: 'Aurora Grand Resort', tier: 'premium', nightly: '489.00', room_sleeps: 5 },
    ],
  },
  {
    id: 'tidewell',
    name: 'Tidewell Resorts (fictional sample operator)',
    area: 'orlando',
    park_name: 'Tidewell Harbor Park',
    currency: 'USD',
    child_ages: '3-9',
    tickets: [
      { days: 1, adult: '109.50', child: '99.50', resident_adult: '94.50', resident_child: '84.50' },
      { days: 2, adult: '209.00', child: '189.00', resident_adult: '179.00', resident_child: '159.00' },
      { days: 3, adult: '299.00', child: '269.00', resident_adult: '249.00', resident_child: '219.00' },
      { days: 4, adult: '379.00', child: '339.00', resident_adult: '309.00', resident_child: '269.00' },
      { days: 5, adult: '449.00', child: '399.00', resident_adult: '359.00', resident_child: '309.00' },
    ],
    extra_day: { adult: '55.00', child: '49.00', resident_adult: '45.00', resident_child: '39.00' },
    hotels: [
      { id: 'tidewell-driftwood', name: 'Driftwood Motor Lodge', tier: 'budget', nightly: '119.00', room_sleeps: 4 },
      { id: 'tidewell-harbor-house', name: 'Harbor House Hotel', tier: 'standard', nightly: '209.50', room_sleeps: 4 },
      { id: 'tidewell-lighthouse', name: 'Lighthouse Point Resort', tier: 'premium', nightly: '455.00', room_sleeps: 6 },
    ],
  },
];

/** UTC midnight of the day containing Unix second `unix`. */
export function utcMidnight(unix: number): number {
  return Math.floor(unix / 86_400) * 86_400;
}

/** The sample events with absolute times, for an anchor (a UTC midnight, Unix seconds). */
export function sampleEvents(anchor: number): EventItem[] {
  return SAMPLE_EVENT_ROWS.map(
    ([id, title, area, venue, category, lat, lon, day, hourUtc, hours, price, tags, description, adults_only]) => {
      const start = anchor + day * 86_400 + hourUtc * 3_600;
      return {
        id,
        title,
        area,
        venue,
        category,
        description,
        tags: tags.split(' '),
        lat,
        lon,
        start,
        end: start + hours * 3_600,
        price,
        currency: area === 'lisbon' ? 'EUR' : 'USD',
        ...(adults_only ? { adults_only: true } : {}),
      };
    },
  );
}

export interface SampleProviderOptions {
  /**
   * Unix seconds; events are placed relative to the UTC midnight of this time. Default: the
   * wall clock when the provider is created (so a demo always has upcoming events). Tests pass it.
   */
  anchor?: number;
}

/**
 * The embedded, fictional sample data set as a {@link DataProvider}. Works offline.
 *
 * @example
 * const answerer = createAnswerer(createSampleProvider({ anchor: 1_780_000_000 }), { now: () => 1_780_000_000 });
 */
export function createSampleProvider(options: SampleProviderOptions = {}): DataProvider {
  const anchorInput = options.anchor ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(anchorInput)) throw new TypeError('anchor must be an integer number of Unix seconds');
  const events = Object.freeze(sampleEvents(utcMidnight(anchorInput)));
  return {
    source: SAMPLE_SOURCE,
    areas: async () => SAMPLE_AREAS,
    places: async () => SAMPLE_PLACES,
    deals: async () => SAMPLE_DEALS,
    events: async () => events,
    resorts: async () => SAMPLE_RESORTS,
  };
}
