"""Prose in 39 languages and the HTML pages built from it, for the charset experiment.

Every sentence was written for this corpus (no text was downloaded): plain
sentences about everyday things, with the letters that make each language
distinctive (French œ and ç, Polish ł and ż, Czech ř and ů, Hungarian ő and ű,
Romanian ş and ţ in their legacy cedilla forms, Icelandic ð and þ, Turkish ı
and ğ, Ukrainian ї and ґ, Greek accented capitals such as Ά and Ό, ...).

A language lists the legacy code pages its pages were written in on the web
(Python codec names); UTF-8 is added for every language. A sentence a code
page cannot encode is left out of that code page's pages (the Chinese
sentence with characters outside GBK is only in GB18030 and UTF-8 pages).

Pages: ``short_excerpts`` gives three runs of consecutive sentences of
150-600 characters each (a short page), ``long_excerpt`` all of them (a long
page, with navigation, an inline style sheet and a script around the prose).
``page`` wraps an excerpt in HTML with the charset declared one way or none.
"""
from __future__ import annotations

from dataclasses import dataclass

WESTERN = ("cp1252",)
CENTRAL = ("cp1250",)
CYRILLIC = ("cp1251",)
BALTIC = ("cp1257",)
UNICODE = ("utf-8",)
# Languages whose pages also come as UTF-8 with a BOM and as UTF-16 with a BOM.
BOM_LANGUAGES = ("fr", "de", "ru", "el", "he", "ar", "zh-Hans", "ja", "ko", "hi")


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    legacy: tuple[str, ...]       # Python codecs of the legacy encodings this language's pages used
    sentences: tuple[str, ...]

    def sentences_in(self, codec: str) -> tuple[str, ...]:
        """The sentences this codec can encode."""
        return tuple(s for s in self.sentences if _encodable(s, codec))


def _encodable(text: str, codec: str) -> bool:
    try:
        text.encode(codec)
    except UnicodeEncodeError:
        return False
    return True


LANGUAGES = (
    Language("en", "English", WESTERN, (
        "The café on the corner opens at seven, and by eight o’clock there’s already a queue of commuters "
        "waiting for coffee.",
        "Her résumé listed three languages, a year abroad in Zürich and a naïve enthusiasm for spreadsheets "
        "— the manager hired her anyway.",
        "“Don’t forget the umbrella,” my grandmother said, although the forecast promised sunshine for the "
        "whole weekend.",
        "The museum’s new wing cost £40 million and took six years to build; critics call it bold, visitors "
        "mostly call it confusing.",
        "Trains between the two cities run every half hour, but the last one leaves before midnight, which "
        "surprises most tourists.",
        "After the storm, volunteers cleared fallen branches from the park’s paths and repainted the benches "
        "by the pond.",
        "The library’s reading room is quiet in the morning, but after school it fills with teenagers doing "
        "homework.",
        "We rented a small cottage by the lake for a week — no television, no Wi-Fi, just books and long "
        "walks.",
        "The bakery’s sourdough sells out by ten, so regulars order the day before and pick it up on their "
        "way to work.",
        "Parliament will vote on the new budget next Tuesday; the opposition has already promised to reject "
        "it.",
    )),
    Language("fr", "French", WESTERN, (
        "Le coût de la vie a beaucoup augmenté cette année, et même les élèves les plus économes ont du mal "
        "à payer leur loyer.",
        "À la fin du repas, le garçon nous a apporté une crème brûlée et deux cafés bien serrés.",
        "Ma sœur préfère lire les œuvres de Molière au bord du lac, où l’on entend à peine le bruit de la "
        "ville.",
        "Ce chemin est très sûr : on peut s’y promener seul la nuit sans crainte, même en hiver quand il gèle.",
        "Les ouvriers ont reconstruit le château après l’incendie ; la façade a retrouvé son éclat "
        "d’autrefois.",
        "Noël approche, et les enfants rêvent déjà des jouets qu’ils trouveront au pied du sapin décoré.",
        "Il faut goûter le pâté de campagne et le fromage affiné, c’est la spécialité de cette région côtière.",
        "Le médecin m’a conseillé de marcher une heure par jour et de boire moins de café.",
        "Chaque été, nous louons une maison à la campagne où les enfants jouent dehors jusqu’au soir.",
        "Le musée a prêté ses tableaux les plus célèbres à une galerie étrangère pour une exposition.",
        "L’hôpital cherche des infirmières, car beaucoup sont parties à la retraite l’année dernière.",
    )),
    Language("de", "German", WESTERN, (
        "Die Straßenbahn fährt alle zehn Minuten vom Hauptbahnhof zur Universität, außer am Wochenende.",
        "Im Frühling blühen die Obstbäume im Tal, und die Bauern hoffen auf ein gutes Jahr ohne späten Frost.",
        "Für die Prüfung müssen die Schüler drei Bücher lesen und einen Aufsatz über die Geschichte ihrer "
        "Stadt schreiben.",
        "Der Bürgermeister eröffnete das neue Schwimmbad persönlich und sprang als Erster ins kühle Wasser.",
        "Wir haben uns über die Größe der Wohnung gefreut, aber die Küche ist leider ziemlich dunkel.",
        "Österreichische Süßspeisen wie Kaiserschmarrn und Sachertorte gehören zu den bekanntesten "
        "Gerichten Europas.",
        "Mein Großvater erzählt gern von der Zeit, als er mit dem Fahrrad über die Alpen gefahren ist.",
        "Die Bäckerei öffnet schon um sechs Uhr, damit die Pendler frische Brötchen für den Zug kaufen können.",
        "Nach dem heftigen Gewitter waren viele Straßen überflutet und die Feuerwehr musste Keller leerpumpen.",
        "Am Samstag findet auf dem Marktplatz ein Flohmarkt statt, bei dem man alte Möbel günstig bekommt.",
    )),
    Language("es", "Spanish", WESTERN, (
        "El año pasado viajamos a Córdoba para ver la mezquita y probar el salmorejo que preparan en los "
        "mesones del centro.",
        "¿Sabías que el pingüino emperador puede sumergirse a más de quinientos metros de profundidad?",
        "Mi abuela guardaba las cartas de su juventud en una caja de cartón, atadas con una cinta azul.",
        "¡Qué sorpresa! El niño aprendió a nadar en una sola tarde, sin miedo y sin ayuda de nadie.",
        "La reunión se aplazó hasta el miércoles porque el director estaba enfermo y nadie quería decidir "
        "sin él.",
        "En la montaña el clima cambia rápido: por la mañana hace sol y por la tarde cae granizo.",
        "Los domingos mi familia se reúne en casa de los abuelos para comer paella y charlar durante horas.",
        "El pequeño pueblo de pescadores se convirtió en un destino turístico después de aparecer en una "
        "película.",
        "La biblioteca municipal amplió su horario y ahora abre también los sábados por la tarde.",
        "Después de la tormenta, los vecinos ayudaron a limpiar las calles llenas de barro y ramas.",
    )),
    Language("pt", "Portuguese", WESTERN, (
        "A população da cidade cresceu muito nos últimos anos, e as escolas não têm vagas para todas as "
        "crianças.",
        "Ontem à noite comemos bacalhau com grão-de-bico e bebemos um vinho verde muito fresco.",
        "O avião atrasou duas horas por causa da neblina, mas ninguém perdeu a ligação para São Paulo.",
        "As mãos do pescador estavam rachadas pelo sal e pelo vento depois de tantos invernos no mar.",
        "A exposição reúne fotografias raras da construção da ponte e atrai milhares de visitantes por mês.",
        "Você já experimentou o pão de queijo? É fácil de fazer e fica delicioso com café.",
        "Aos domingos a família inteira almoça na casa da avó, que prepara feijoada desde cedo.",
        "O pequeno café da esquina serve os melhores pastéis de nata do bairro, ainda quentes.",
        "Depois da tempestade, os vizinhos ajudaram a limpar as ruas cheias de lama e galhos.",
        "A prefeitura anunciou que as obras do metrô só ficarão prontas no próximo ano.",
    )),
    Language("it", "Italian", WESTERN, (
        "La città è piena di turisti in agosto, perciò molti abitanti preferiscono andare al mare o in "
        "montagna.",
        "Perché non vieni a cena da noi venerdì? Preparo le lasagne e il tiramisù della nonna.",
        "Il treno per Bologna partirà con mezz’ora di ritardo a causa di un guasto sulla linea.",
        "Più studio la storia dell’arte, più capisco quanta bellezza è nascosta nelle piccole chiese di paese.",
        "L’università ha aperto una nuova biblioteca, dove gli studenti possono lavorare fino a mezzanotte.",
        "Così è finita la stagione: la squadra è arrivata terza, ma i tifosi sono comunque felici.",
        "La domenica tutta la famiglia pranza dalla nonna, che prepara il ragù fin dal mattino.",
        "Dopo il temporale, i vicini hanno aiutato a pulire le strade piene di fango e rami.",
        "Il piccolo borgo di pescatori è diventato famoso dopo essere apparso in un film.",
        "Ogni estate andiamo in Sicilia, dove mangiamo granite e cannoli fino a sentirci male.",
    )),
    Language("nl", "Dutch", WESTERN, (
        "De vergadering over de nieuwe fietsbrug werd tot één uur ’s nachts verlengd, want iedereen had een "
        "mening.",
        "Mijn oma bakt elke zondag appeltaart en zet er koffie bij, ook als er geen bezoek komt.",
        "De coördinatie tussen de ziekenhuizen in België en Nederland verloopt tegenwoordig veel beter.",
        "Na de ruïne van het oude kasteel liepen we door de velden naar het café aan de rivier.",
        "Het financiële rapport toont dat de ideeën van het nieuwe bestuur de kosten flink hebben verlaagd.",
        "In de herfst is het weer vaak grillig: zon, regen en hagel kunnen elkaar binnen een uur afwisselen.",
        "Hij is een naïeve maar enthousiaste student die zijn scriptie over zeeën en rivieren schrijft.",
        "Op zaterdag is er markt op het plein, waar je verse vis, kaas en bloemen kunt kopen.",
        "Na de storm hielpen de buren elkaar om omgewaaide bomen uit de tuinen te zagen.",
        "De bibliotheek in ons dorp is verbouwd en heeft nu een leeshoek voor kinderen.",
        "Mijn broer werkt in Rotterdam en fietst elke dag een half uur naar zijn kantoor.",
    )),
    Language("sv", "Swedish", WESTERN, (
        "På vintern blir det mörkt redan vid tretiden, så vi tänder ljus i alla fönster och dricker varm "
        "choklad.",
        "Min bror bor i en liten stuga vid sjön, där han fiskar gädda och abborre hela sommaren.",
        "Tåget till Göteborg var försenat i över en timme på grund av ett fel på växeln.",
        "Barnen älskar att åka skridskor på isen när den äntligen är tillräckligt tjock.",
        "Många svenskar plockar blåbär och lingon i skogen under hösten och fryser in dem till vintern.",
        "Kommunen har byggt en ny skola med ett bibliotek som är öppet även på lördagar.",
        "Varje midsommar dansar vi runt midsommarstången och äter sill med färskpotatis.",
        "Efter stormen hjälpte grannarna varandra att såga upp träd som blåst omkull.",
        "Min mormor bakar kanelbullar varje lördag och bjuder alla som kommer förbi.",
        "Bussen till flygplatsen går var tjugonde minut från centralstationen.",
    )),
    Language("da", "Danish", WESTERN, (
        "Om sommeren cykler vi langs kysten og spiser is på havnen, mens solen går ned over vandet.",
        "Min søster læser til læge på universitetet i Århus og arbejder om aftenen på et plejehjem.",
        "Der er ingen bjerge i Danmark, men vinden gør det hårdt nok at cykle hjem fra arbejde.",
        "Bageren på hjørnet sælger de bedste wienerbrød i byen, og køen er lang hver lørdag morgen.",
        "Børnene byggede en snemand i gården og gav ham en gulerod som næse og to sten som øjne.",
        "Færgen til øerne sejler hver anden time, så det er klogt at købe billet på forhånd.",
        "Hver sankthansaften tænder vi bål på stranden og synger sammen med naboerne.",
        "Efter stormen hjalp alle hinanden med at fjerne væltede træer fra vejene.",
        "Min mormor bager æbleskiver til jul, og hele familien kommer for at smage.",
        "Toget til København var forsinket, fordi der lå blade på skinnerne.",
    )),
    Language("nb", "Norwegian", WESTERN, (
        "Vi gikk på ski over fjellet i påsken og overnattet på en liten hytte uten strøm.",
        "Fiskerne i Lofoten henger torsken til tørk på hjeller hele vinteren.",
        "Bestemor lærte meg å strikke votter, og nå strikker jeg gaver til hele familien før jul.",
        "Båten til øya går bare to ganger om dagen, så vi må rekke den første klokka åtte.",
        "Det regnet i tre døgn, og elva gikk over sine bredder i den lille bygda.",
        "Mange nordmenn drømmer om en hytte ved sjøen der de kan være alene med naturen.",
        "På nasjonaldagen går barna i tog gjennom byen med flagg og korps.",
        "Etter stormen hjalp naboene hverandre med å fjerne trær som hadde blåst ned.",
        "Mormor baker lefser til jul, og hele familien samles på kjøkkenet hennes.",
        "Toget til Bergen går gjennom noen av de vakreste landskapene i Europa.",
    )),
    Language("fi", "Finnish", WESTERN, (
        "Kesällä aurinko ei laske lainkaan Lapissa, ja ihmiset nukkuvat huonosti valoisien öiden takia.",
        "Isoäiti paistoi karjalanpiirakoita ja keitti kahvia, kun lapsenlapset tulivat kylään.",
        "Järven jää on keväällä vaarallisen ohutta, joten sillä ei pidä kävellä huhtikuussa.",
        "Sauna lämpiää puilla, ja löylyn jälkeen hypätään suoraan kylmään veteen.",
        "Yliopiston kirjasto on auki myöhään, joten opiskelijat viipyvät siellä usein iltaan asti.",
        "Šakki on suosittu harrastus, ja kaupungin kerho järjestää turnauksen joka kuukausi.",
        "Juhannuksena poltamme kokon järven rannalla ja syömme uusia perunoita silakan kanssa.",
        "Myrskyn jälkeen naapurit auttoivat toisiaan sahaamaan kaatuneita puita.",
        "Mummo leipoo pullaa joka lauantai ja tarjoaa sitä kaikille vierailijoille.",
        "Bussi lentokentälle lähtee rautatieasemalta kahdenkymmenen minuutin välein.",
    )),
    Language("ca", "Catalan", WESTERN, (
        "La plaça del poble s’omple de gent cada diumenge per ballar sardanes davant de l’església.",
        "El col·legi ha organitzat una excursió a la muntanya perquè els alumnes coneguin els boscos.",
        "L’àvia cuina un arròs negre boníssim, i tota la família ve a dinar a casa seva.",
        "Aquest estiu farem una travessa pels Pirineus i dormirem en refugis de muntanya.",
        "La biblioteca municipal té una col·lecció de llibres antics que només es pot consultar amb cita "
        "prèvia.",
        "Quan plou a Barcelona, els carrers s’omplen de paraigües i el trànsit es torna impossible.",
        "Per Sant Jordi, els carrers s’omplen de parades de llibres i de roses vermelles.",
        "Després de la tempesta, els veïns van ajudar a netejar els carrers plens de fang.",
        "La meva germana treballa a València i cada cap de setmana torna a casa amb tren.",
        "Els castellers van aixecar una torre de nou pisos davant de l’ajuntament.",
    )),
    Language("is", "Icelandic", WESTERN, (
        "Á veturna er myrkur mestallan daginn, en norðurljósin lýsa upp himininn á heiðskírum kvöldum.",
        "Við fórum í sund í heita pottinum og töluðum um veðrið, eins og allir Íslendingar gera.",
        "Þingvellir eru þjóðgarður þar sem Alþingi var stofnað árið 930.",
        "Amma mín bakaði flatkökur og kleinur fyrir afmælið hans afa.",
        "Hraunið þekur stóran hluta landsins og þar vex aðeins mosi og lyng.",
        "Ferðamönnum hefur fjölgað mikið og því þarf að byggja fleiri hótel úti á landi.",
        "Á sumrin er bjart allan sólarhringinn og fólk fer í útilegur um allt land.",
        "Eftir storminn hjálpuðust nágrannarnir að við að hreinsa garðana.",
        "Bróðir minn vinnur á togara og er oft úti á sjó í þrjár vikur í senn.",
        "Í Reykjavík eru margar sundlaugar sem eru opnar frá morgni til kvölds.",
    )),
    Language("pl", "Polish", ("cp1250", "iso8859_2"), (
        "Wczoraj wieczorem poszliśmy z przyjaciółmi na spacer brzegiem Wisły, a potem zjedliśmy pierogi "
        "w małej knajpce.",
        "Żółta łódź kołysała się na jeziorze, gdy rybak zarzucał sieć o świcie.",
        "Dzieci uczą się w szkole języka angielskiego od pierwszej klasy, ale wolą grać w piłkę.",
        "Zima w górach bywa surowa: śnieg pada przez całą noc i drogi są nieprzejezdne.",
        "Mój dziadek opowiadał, że przed wojną w tym domu mieszkało jedenaście osób.",
        "Ceny mieszkań w Krakowie rosną szybciej niż zarobki, więc młodzi ludzie wyprowadzają się za miasto.",
        "W niedzielę cała rodzina spotyka się u babci na obiedzie, który zawsze trwa kilka godzin.",
        "Po burzy sąsiedzi pomagali sobie nawzajem usuwać połamane gałęzie z ogrodów.",
        "Biblioteka miejska została odnowiona i teraz ma osobną salę dla dzieci.",
        "Pociąg do Gdańska spóźnił się o godzinę z powodu awarii sieci trakcyjnej.",
    )),
    Language("cs", "Czech", CENTRAL, (
        "V létě jezdíme k babičce na chalupu, kde se koupeme v řece a sbíráme houby v lese.",
        "Tramvaj číslo devět jede přes Karlův most až na náměstí, ale v neděli jezdí méně často.",
        "Děti se těší na Vánoce, protože dostanou dárky a budou jíst cukroví celé svátky.",
        "Ředitel školy oznámil, že tělocvična bude kvůli opravě střechy zavřená až do března.",
        "Příliš žluťoučký kůň úpěl ďábelské ódy, říká se v každé učebnici češtiny.",
        "Na horách napadlo čtyřicet centimetrů sněhu a silnice byly několik hodin neprůjezdné.",
        "V neděli se celá rodina schází u babičky na oběd, který vždycky trvá několik hodin.",
        "Po bouřce si sousedé navzájem pomáhali odklízet popadané větve ze zahrad.",
        "Městská knihovna byla zrekonstruována a teď má zvláštní místnost pro děti.",
        "Vlak do Brna měl hodinové zpoždění kvůli poruše trakčního vedení.",
    )),
    Language("sk", "Slovak", CENTRAL, (
        "V lete chodíme s deťmi do Tatier, kde sa kúpeme v horských plesách a zbierame čučoriedky.",
        "Môj starý otec rozprával, že kedysi sa chlieb piekol v peci raz za týždeň.",
        "Ľudia v dedine si ešte pamätajú veľkú povodeň, ktorá zničila most cez rieku.",
        "Vlak do Košíc mešká päťdesiat minút pre poruchu na trati pri Žiline.",
        "Vŕba pri potoku sa skláňa nad vodou a deti si z jej prútov pletú košíky.",
        "Dĺžka nového mosta je takmer pol kilometra a stavba trvala štyri roky.",
        "V nedeľu sa celá rodina stretáva u babky na obede, ktorý vždy trvá niekoľko hodín.",
        "Po búrke si susedia navzájom pomáhali odpratávať spadnuté konáre zo záhrad.",
        "Mestská knižnica bola zrekonštruovaná a teraz má osobitnú miestnosť pre deti.",
        "Na námestí v Bratislave sa každý rok konajú vianočné trhy s vareným vínom.",
    )),
    Language("hu", "Hungarian", CENTRAL, (
        "Tavaly nyáron a Balatonnál nyaraltunk, és minden este lángost ettünk a parton.",
        "A nagymamám receptje szerint a gulyáshoz sok pirospaprika és egy kis kömény kell.",
        "Az egyetemi könyvtár hétvégén is nyitva tart, ezért a diákok gyakran ott tanulnak.",
        "Árvíztűrő tükörfúrógép: ezt a szót minden magyar gépíró ismeri.",
        "A vonat tizenöt perc késéssel érkezett Debrecenbe a hóesés miatt.",
        "Őszre a szőlő beérik, és a falu apraja-nagyja részt vesz a szüretben.",
        "Vasárnaponként az egész család a nagymamánál ebédel, és ilyenkor mindig húsleves a kezdés.",
        "A vihar után a szomszédok segítettek egymásnak eltakarítani a kidőlt fákat.",
        "A városi könyvtárat felújították, és most külön olvasóterme van a gyerekeknek.",
        "Budapesten a villamos a Duna-parton halad, ahonnan szép a kilátás a Parlamentre.",
    )),
    Language("sl", "Slovenian", CENTRAL, (
        "Poleti se radi kopamo v jezeru in se vozimo s kolesom po gozdnih poteh.",
        "Babica je spekla potico z orehi, ki je bila najboljša na vsem svetu.",
        "Železniška postaja v Ljubljani je bila prenovljena, vendar vlaki še vedno zamujajo.",
        "Na Triglav se vsako leto povzpne na tisoče planincev iz vse Evrope.",
        "Otroci so v šoli risali živali, ki živijo v Sloveniji, na primer medveda in ježa.",
        "Čeprav je bilo hladno, smo večerjali zunaj in gledali zvezde nad hribi.",
        "Ob nedeljah se vsa družina zbere pri babici na kosilu, ki vedno traja več ur.",
        "Po neurju so si sosedje pomagali odstranjevati podrta drevesa z vrtov.",
        "Mestna knjižnica je bila prenovljena in ima zdaj posebno sobo za otroke.",
        "Vlak do Maribora je imel zamudo zaradi okvare na progi pri Celju.",
    )),
    Language("hr", "Croatian", CENTRAL, (
        "Ljeti idemo na more u Dalmaciju, gdje se kupamo i jedemo svježu ribu s roštilja.",
        "Moja baka uvijek kaže da je najbolji kruh onaj koji se peče u krušnoj peći.",
        "Đaci su na izletu posjetili Plitvička jezera i fotografirali slapove.",
        "Zbog jakog vjetra trajekt za otok danas ne plovi, pa putnici čekaju u luci.",
        "Šetnja starim gradom Dubrovnikom traje nekoliko sati ako želite vidjeti sve zidine.",
        "Ćevapi i ajvar omiljena su jela mnogih obitelji nedjeljom za ručak.",
        "Nedjeljom se cijela obitelj okuplja kod bake na ručku koji uvijek traje satima.",
        "Nakon oluje susjedi su si međusobno pomagali ukloniti srušeno granje iz vrtova.",
        "Gradska knjižnica je obnovljena i sada ima posebnu sobu za djecu.",
        "Vlak za Split kasnio je sat vremena zbog kvara na pruzi kod Knina.",
    )),
    Language("ro", "Romanian", CENTRAL, (
        "În fiecare vară mergem la bunici la ţară, unde ne trezim devreme şi mâncăm mămăligă cu brânză.",
        "Trenul spre Braşov a întârziat o oră din cauza zăpezii căzute peste noapte.",
        "Şcoala din sat a fost renovată, iar copiii au acum o sală de sport nouă.",
        "Pădurile din Carpaţi sunt pline de urşi, lupi şi râşi, aşa că turiştii trebuie să fie atenţi.",
        "Bunica păstrează reţetele vechi într-un caiet gros, scris de mână.",
        "Primăria a promis că strada noastră va fi asfaltată până la sfârşitul anului.",
        "Duminica toată familia se adună la bunica la masă, iar prânzul durează câteva ore.",
        "După furtună, vecinii s-au ajutat unii pe alţii să strângă crengile rupte din grădini.",
        "Biblioteca oraşului a fost renovată şi acum are o sală specială pentru copii.",
        "În Bucureşti, traficul de dimineaţă este atât de aglomerat încât mulţi merg cu metroul.",
    )),
    Language("ru", "Russian", ("cp1251", "koi8_r"), (
        "Летом мы всей семьёй ездим на дачу, где выращиваем огурцы, помидоры и клубнику.",
        "В Москве открыли новую станцию метро, и теперь до работы можно доехать за двадцать минут.",
        "Бабушка испекла пироги с капустой и позвала соседей на чай.",
        "Зимой река замерзает, и дети катаются на коньках прямо у берега.",
        "Съешь же ещё этих мягких французских булок да выпей чаю.",
        "Учёные обнаружили в сибирской тайге следы древнего поселения.",
        "По воскресеньям вся семья собирается у бабушки на обед, который длится несколько часов.",
        "После грозы соседи помогали друг другу убирать упавшие ветки из садов.",
        "Городскую библиотеку отремонтировали, и теперь в ней есть отдельный зал для детей.",
        "Поезд до Санкт-Петербурга опоздал на час из-за неисправности на путях.",
    )),
    Language("uk", "Ukrainian", ("cp1251", "koi8_u"), (
        "Улітку ми їздимо до бабусі в село, де збираємо вишні та купаємося в річці.",
        "Київ відомий своїми золотими банями церков і широким Дніпром.",
        "Діти готуються до іспитів, бо наприкінці травня на них чекає зовнішнє оцінювання.",
        "Ґанок старої хати заріс виноградом, і там завжди прохолодно.",
        "Єдина дорога до села пролягає через старий дерев'яний міст.",
        "Восени у лісі багато грибів, і ми щонеділі ходимо їх збирати з кошиками.",
        "Щонеділі вся родина збирається в бабусі на обід, який триває кілька годин.",
        "Після грози сусіди допомагали одне одному прибирати повалені гілки із садів.",
        "Міську бібліотеку відремонтували, і тепер у ній є окрема зала для дітей.",
        "Потяг до Одеси запізнився на годину через несправність на колії.",
    )),
    Language("bg", "Bulgarian", ("cp1251", "koi8_r"), (
        "През лятото ходим на море във Варна и всяка вечер се разхождаме по крайбрежната алея.",
        "Баба ми прави най-вкусната баница, с много сирене и яйца.",
        "Рила е най-високата планина на Балканския полуостров, а Мусала е нейният връх.",
        "Децата учат английски и немски език в училище още от първи клас.",
        "Влакът за Пловдив закъсня с час заради ремонт на линията.",
        "Розовото масло от Казанлъшката долина е известно по целия свят.",
        "В неделя цялото семейство се събира у баба на обяд, който винаги трае с часове.",
        "След бурята съседите си помагаха да разчистят падналите клони от градините.",
        "Градската библиотека беше ремонтирана и сега има отделна зала за деца.",
        "В София метрото свързва летището с центъра на града за по-малко от половин час.",
    )),
    Language("sr", "Serbian", CYRILLIC, (
        "Лети идемо на село код деде, где беремо шљиве и пецамо рибу у реци.",
        "Београд лежи на ушћу Саве у Дунав и један је од најстаријих градова у Европи.",
        "Моја бака прави најбољу гибаницу, а деда пече ракију од јабука.",
        "Ђаци су на екскурзији посетили манастир Студеницу и Жичу.",
        "Џемпер који ми је мајка исплела још увек је најтоплији у ормару.",
        "Због снега путеви према Копаонику су били затворени неколико сати.",
        "Недељом се цела породица окупља код баке на ручку који увек траје сатима.",
        "После олује комшије су једни другима помагали да уклоне поломљене гране из башти.",
        "Градска библиотека је обновљена и сада има посебну собу за децу.",
        "Воз за Нови Сад каснио је сат времена због квара на прузи.",
    )),
    Language("mk", "Macedonian", CYRILLIC, (
        "Охридското Езеро е едно од најстарите езера во Европа и привлекува многу туристи.",
        "Баба ми секоја недела прави пастрмајлија и вкусен зелник со сирење.",
        "Децата одат на училиште пеш, бидејќи училиштето е блиску до нивната куќа.",
        "Во зимата паѓа многу снег на Шар Планина и скијачите доаѓаат од цела земја.",
        "Ѕвездите над селото се гледаат многу јасно кога нема месечина.",
        "Младите сакаат да работат во странство, но многумина се враќаат дома.",
        "Во недела целото семејство се собира кај баба на ручек што секогаш трае со часови.",
        "По бурата соседите си помагаа да ги исчистат скршените гранки од градините.",
        "Градската библиотека беше реновирана и сега има посебна соба за деца.",
        "Возот за Битола доцнеше еден час поради дефект на пругата.",
    )),
    Language("el", "Greek", ("iso8859_7", "cp1253"), (
        "Άνοιξη στην Αθήνα σημαίνει ανθισμένες νεραντζιές και μεγάλες βόλτες στους λόφους.",
        "Το καλοκαίρι πηγαίνουμε στα νησιά και κολυμπάμε κάθε πρωί στη θάλασσα.",
        "Έχουμε εισιτήρια για το πλοίο των οκτώ, αλλά ο καιρός δεν φαίνεται καλός.",
        "Η γιαγιά μου φτιάχνει την καλύτερη μουσακά και πάντα μαγειρεύει για όλη την οικογένεια.",
        "Ο Όλυμπος είναι το ψηλότερο βουνό της Ελλάδας και, κατά τη μυθολογία, η κατοικία των θεών.",
        "Τα παιδιά ταΐζουν τα περιστέρια στην πλατεία μετά το σχολείο.",
        "Ύστερα από πολλά χρόνια, το παλιό θέατρο άνοιξε ξανά τις πόρτες του στο κοινό.",
        "Κάθε Κυριακή όλη η οικογένεια μαζεύεται στο σπίτι της γιαγιάς για φαγητό.",
        "Μετά την καταιγίδα οι γείτονες βοήθησαν ο ένας τον άλλον να καθαρίσουν τους δρόμους.",
        "Ίσως του χρόνου πάμε διακοπές στην Κρήτη, αν βρούμε φθηνά εισιτήρια.",
        "Ή θα φύγουμε νωρίς το πρωί ή θα περιμένουμε μέχρι να σταματήσει η βροχή.",
    )),
    Language("tr", "Turkish", ("cp1254",), (
        "Yazın ailece Ege kıyılarına gidiyoruz ve her sabah denizde yüzüyoruz.",
        "İstanbul'da trafik o kadar yoğun ki işe vapurla gitmek çok daha hızlı.",
        "Babaannem her bayramda baklava yapar ve bütün komşulara dağıtır.",
        "Öğrenciler sınavlara hazırlanmak için kütüphanede geç saatlere kadar çalışıyor.",
        "Kapadokya'da balonla uçmak için sabahın erken saatlerinde kalkmak gerekiyor.",
        "Şehrin eski çarşısında el yapımı halılar ve bakır kaplar satılıyor.",
        "Pazar günleri bütün aile büyükannemin evinde toplanır ve saatlerce sohbet ederiz.",
        "Fırtınadan sonra komşular birbirlerine yardım ederek bahçelerdeki kırık dalları topladı.",
        "Şehir kütüphanesi yenilendi ve artık çocuklar için ayrı bir okuma salonu var.",
        "Ankara'ya giden tren, raylardaki arıza yüzünden bir saat gecikti.",
    )),
    Language("he", "Hebrew", ("cp1255",), (
        "בקיץ אנחנו נוסעים לים המלח ונהנים מהשמש ומהמים המלוחים.",
        "סבתא שלי מכינה את החלה הכי טעימה לכבוד שבת.",
        "הרכבת לירושלים יוצאת כל חצי שעה מתחנת תל אביב מרכז.",
        "התלמידים למדו על ההיסטוריה של העיר העתיקה וביקרו בכותל המערבי.",
        "בחורף יורד גשם רב בצפון הארץ, והכנרת מתמלאת מחדש.",
        "הספרייה העירונית פתוחה עד שעה מאוחרת, ורבים באים לקרוא בה בערב.",
        "אבא שלי קם כל בוקר מוקדם והולך לשחות בבריכה השכונתית.",
        "בירושלים יש שווקים צבעוניים שבהם מוכרים תבלינים, פירות וממתקים.",
        "בחג הפסח כל המשפחה מתכנסת לסדר אצל סבא וסבתא.",
        "האוניברסיטה פתחה השנה מעבדה חדשה לחקר מים ואנרגיה.",
    )),
    Language("ar", "Arabic", ("cp1256",), (
        "في الصيف نسافر إلى البحر ونقضي أياما جميلة على الشاطئ مع العائلة.",
        "تعد القاهرة من أكبر المدن في العالم العربي وأكثرها ازدحاما.",
        "تحضّر جدتي الكعك في العيد وتوزعه على الجيران والأقارب.",
        "يدرس الطلاب في المكتبة حتى وقت متأخر استعدادا للامتحانات.",
        "افتتحت البلدية حديقة جديدة فيها ملاعب للأطفال وممرات للمشي.",
        "يشتهر سوق المدينة القديم بالتوابل والأقمشة والمصنوعات النحاسية.",
        "يستيقظ أبي كل صباح مبكرا ويذهب إلى المسجد ثم يشتري الخبز الطازج.",
        "في رمضان تجتمع العائلة كلها حول مائدة الإفطار عند غروب الشمس.",
        "تقع مدينة البتراء في جنوب الأردن وهي محفورة في الصخر الوردي.",
        "افتتحت الجامعة مختبرا جديدا لأبحاث الطاقة الشمسية والمياه.",
    )),
    # Persian in windows-1256 was written with the Arabic yeh (U+064A), which the code page has.
    Language("fa", "Persian", ("cp1256",), (
        "تابستان‌ها با خانواده به شمال مي‌رويم و کنار دريا چاي مي‌نوشيم.",
        "پدربزرگم هر شب براي ما داستان‌هاي قديمي تعريف مي‌کند.",
        "دانشجويان براي امتحان پايان ترم در کتابخانه درس مي‌خوانند.",
        "بازار بزرگ تهران پر از فرش، ادويه و ظرف‌هاي مسي است.",
        "در پاييز برگ درختان زرد و نارنجي مي‌شود و هوا خنک‌تر است.",
        "مادرم براي شب يلدا انار و هندوانه و آجيل مي‌خرد.",
        "پدرم هر روز صبح زود بيدار مي‌شود و به پارک نزديک خانه مي‌رود.",
        "اصفهان به خاطر پل‌هاي تاريخي و مسجدهاي زيبايش مشهور است.",
        "در نوروز مردم به ديدن خويشاوندان مي‌روند و سفره هفت‌سين مي‌چينند.",
        "دانشگاه امسال آزمايشگاه تازه‌اي براي پژوهش درباره آب راه‌اندازي کرد.",
    )),
    Language("th", "Thai", ("cp874", "tis_620"), (
        "ในฤดูร้อนครอบครัวของเราชอบไปเที่ยวทะเลที่ภูเก็ตและกินอาหารทะเลสด ๆ ทุกวัน",
        "คุณยายทำแกงเขียวหวานอร่อยที่สุดในหมู่บ้าน ทุกคนจึงมากินข้าวที่บ้านเราในวันอาทิตย์",
        "รถไฟฟ้าในกรุงเทพฯ ช่วยให้การเดินทางไปทำงานสะดวกและรวดเร็วขึ้นมาก",
        "นักเรียนต้องอ่านหนังสือทุกคืนเพื่อเตรียมตัวสอบปลายภาคเรียน",
        "เทศกาลสงกรานต์เป็นช่วงที่ผู้คนสาดน้ำกันอย่างสนุกสนานทั่วประเทศ",
        "ตลาดน้ำดำเนินสะดวกมีเรือขายผลไม้และขนมไทยมากมาย",
        "เชียงใหม่มีวัดเก่าแก่มากมายและอากาศเย็นสบายในช่วงฤดูหนาว",
        "พ่อของฉันตื่นแต่เช้าทุกวันเพื่อไปตักบาตรพระที่หน้าบ้าน",
        "ร้านก๋วยเตี๋ยวเรือริมคลองขายดีมากจนต้องต่อคิวยาว",
        "ช่วงฤดูฝนถนนหลายสายในเมืองมักมีน้ำท่วมขัง",
    )),
    Language("lt", "Lithuanian", BALTIC, (
        "Vasarą mes važiuojame prie jūros į Palangą ir kasdien maudomės Baltijoje.",
        "Močiutė kepa skaniausius cepelinus ir visada pavaišina kaimynus.",
        "Vilniaus senamiestis įtrauktas į UNESCO pasaulio paveldo sąrašą.",
        "Žiemą ežerai užšąla, o vaikai čiuožia ant ledo iki pat vakaro.",
        "Studentai ruošiasi egzaminams bibliotekoje, kuri dirba iki vidurnakčio.",
        "Rudenį miškuose daug grybų, todėl žmonės savaitgaliais važiuoja jų rinkti.",
        "Sekmadieniais visa šeima susirenka pas močiutę pietų, kurie visada trunka kelias valandas.",
        "Po audros kaimynai padėjo vieni kitiems surinkti nulūžusias šakas iš sodų.",
        "Miesto biblioteka buvo atnaujinta ir dabar turi atskirą salę vaikams.",
        "Traukinys į Kauną vėlavo valandą dėl gedimo bėgiuose.",
    )),
    Language("lv", "Latvian", BALTIC, (
        "Vasarā mēs braucam uz jūrmalu un katru rītu peldamies jūrā.",
        "Vecmāmiņa cep garšīgākos pīrāgus ar speķi un sīpoliem.",
        "Rīgas vecpilsēta ir pilna ar šaurām ieliņām un skaistām baznīcām.",
        "Ziemā ezeri aizsalst, un bērni slido uz ledus līdz vēlam vakaram.",
        "Ķekavā atvērta jauna skola ar plašu sporta zāli un bibliotēku.",
        "Jāņos latvieši pin vainagus, dzied dziesmas un lec pāri ugunskuram.",
        "Svētdienās visa ģimene pulcējas pie vecmāmiņas pusdienās, kas vienmēr ilgst vairākas stundas.",
        "Pēc vētras kaimiņi palīdzēja cits citam savākt nolūzušos zarus no dārziem.",
        "Pilsētas bibliotēka tika atjaunota, un tagad tajā ir atsevišķa zāle bērniem.",
        "Vilciens uz Daugavpili kavējās stundu bojājuma dēļ uz sliedēm.",
    )),
    Language("zh-Hans", "Chinese (Simplified)", ("gbk", "gb18030"), (
        # 𠮷 and 䶮 are outside GBK: only GB18030 (and UTF-8) pages have this sentence.
        "吉野家招牌上的“𠮷”字和人名里的“䶮”字，只有用GB18030才能正确编码。",
        "夏天我们全家去海边度假，每天早上都在沙滩上散步，晚上吃新鲜的海鲜。",
        "奶奶包的饺子是世界上最好吃的，过年的时候全家人都围在一起包饺子。",
        "北京的地铁四通八达，上下班高峰时人非常多，但是比开车快得多。",
        "学生们为了准备期末考试，每天在图书馆学习到很晚。",
        "秋天的香山满山红叶，吸引了成千上万的游客前来观赏。",
        "这家老字号茶馆已经有一百多年的历史，很多老人每天早上都来这里喝茶聊天。",
        "上海的外滩夜景非常美丽，黄浦江两岸高楼林立，灯光璀璨。",
        "爷爷每天早上六点起床，在公园里打太极拳，然后去菜市场买菜。",
        "这个城市的冬天很冷，常常下雪，孩子们喜欢在院子里堆雪人。",
        "我的同事下个月要去广州出差，他打算顺便尝尝当地的早茶。",
        "图书馆新进了一批关于人工智能的书籍，借阅的人特别多。",
        "妈妈做的红烧肉肥而不腻，每次我们都会多吃一碗米饭。",
        "长江是中国最长的河流，沿岸有许多历史悠久的城市。",
        "周末我们去郊区爬山，山顶的空气清新，风景也很好看。",
    )),
    Language("zh-Hant", "Chinese (Traditional)", ("big5",), (
        "臺北的夜市非常熱鬧，每到晚上就有許多人來吃小吃、買衣服。",
        "外婆做的蘿蔔糕是全家人最喜歡的年菜，每年過年前都要做好幾盤。",
        "颱風來的時候，學校會停課，大家都待在家裡看電視。",
        "阿里山的日出非常壯觀，很多遊客半夜就起床搭小火車上山。",
        "這間書店已經開了五十年，老闆認識附近每一位常客。",
        "香港的港口夜景舉世聞名，維多利亞港兩岸燈火輝煌。",
        "週末我們全家到淡水看夕陽，順便吃了阿給和魚丸湯。",
        "這所大學的圖書館藏書豐富，許多研究生每天都在那裡讀書。",
        "臺灣的高鐵從臺北到高雄只要一個半小時，非常方便。",
        "爺爺年輕時是漁夫，常常講海上遇到颱風的故事給我們聽。",
        "端午節的時候，大家會吃粽子、看龍舟比賽。",
        "這家餐廳的牛肉麵湯頭濃郁，麵條也很有嚼勁，總是大排長龍。",
        "春天到陽明山賞花的人很多，山上的櫻花和杜鵑都開得很漂亮。",
        "我妹妹在師範大學念書，將來想當國小老師。",
    )),
    Language("ja", "Japanese", ("shift_jis", "euc_jp"), (
        "夏休みには家族で海へ行き、毎日泳いだり、かき氷を食べたりしました。",
        "祖母が作る肉じゃがは、どのお店の料理よりもおいしいと思います。",
        "東京の電車はとても正確で、数分遅れただけでもお詫びのアナウンスが流れます。",
        "秋になると、京都のお寺は紅葉を見に来る観光客でいっぱいになります。",
        "学生たちは試験に向けて、図書館で夜遅くまで勉強しています。",
        "駅前の小さなラーメン屋は、昼になるといつも長い行列ができます。",
        "週末は友達と一緒に山に登り、頂上でお弁当を食べました。",
        "新しい図書館には、子ども向けの絵本がたくさん並んでいます。",
        "父は毎朝六時に起きて、犬の散歩をしてから会社に行きます。",
        "梅雨の季節になると、毎日のように雨が降って洗濯物が乾きません。",
        "北海道の冬はとても寒く、雪まつりには世界中から人が集まります。",
        "駅の近くに新しいパン屋ができたので、今朝さっそく行ってみました。",
        "日本の高校生の多くは、放課後に部活動で汗を流しています。",
        "温泉旅館の露天風呂から見える富士山の景色は、まさに絶景でした。",
    )),
    Language("ko", "Korean", ("euc_kr",), (
        "여름 방학에는 가족과 함께 바닷가에 가서 매일 수영을 했습니다.",
        "할머니가 만들어 주신 김치찌개는 세상에서 제일 맛있습니다.",
        "서울의 지하철은 깨끗하고 편리해서 많은 사람들이 출퇴근할 때 이용합니다.",
        "가을이 되면 설악산은 단풍을 보러 온 등산객들로 붐빕니다.",
        "학생들은 시험을 준비하기 위해 도서관에서 밤늦게까지 공부합니다.",
        "시장 골목의 작은 식당에서는 따뜻한 국밥을 저렴한 가격에 팝니다.",
        "주말에는 친구들과 한강 공원에서 자전거를 타고 치킨을 먹었습니다.",
        "우리 동네 도서관은 밤 열 시까지 문을 열어서 학생들이 많이 찾습니다.",
        "부산의 해운대 해수욕장은 여름마다 피서객으로 가득 찹니다.",
        "아버지는 매일 아침 일찍 일어나 뒷산에 올라 운동을 하십니다.",
        "추석에는 온 가족이 모여 송편을 빚고 차례를 지냅니다.",
        "제주도의 한라산은 사계절 내내 아름다운 풍경을 보여 줍니다.",
        "새로 생긴 빵집은 아침마다 갓 구운 빵 냄새로 골목을 가득 채웁니다.",
        "겨울이 되면 거리마다 붕어빵과 호떡을 파는 노점이 생깁니다.",
    )),
    Language("vi", "Vietnamese", (), (
        "Mùa hè năm ngoái, cả gia đình tôi đi biển Nha Trang và ăn hải sản tươi mỗi ngày.",
        "Bà ngoại nấu phở ngon nhất xóm, sáng nào hàng xóm cũng sang ăn.",
        "Hà Nội có nhiều hồ đẹp, nổi tiếng nhất là hồ Hoàn Kiếm ở trung tâm thành phố.",
        "Học sinh phải ôn bài thật kỹ để chuẩn bị cho kỳ thi cuối năm.",
        "Vào dịp Tết, người ta gói bánh chưng và đi chúc Tết họ hàng.",
        "Chợ nổi Cái Răng ở Cần Thơ họp từ sáng sớm, thuyền chở đầy trái cây.",
        "Ông tôi thường dậy sớm tập thể dục ở công viên rồi uống trà với bạn bè.",
        "Sau cơn bão, hàng xóm giúp nhau dọn dẹp cành cây gãy trên đường.",
    )),
    Language("hi", "Hindi", (), (
        "गर्मियों की छुट्टियों में हम पूरे परिवार के साथ पहाड़ों पर घूमने जाते हैं।",
        "दादी माँ के हाथ के बने पराठे सबसे स्वादिष्ट होते हैं।",
        "दिल्ली की मेट्रो ने शहर में आना-जाना बहुत आसान बना दिया है।",
        "छात्र परीक्षा की तैयारी के लिए देर रात तक पुस्तकालय में पढ़ते हैं।",
        "दीवाली पर घरों को दीयों और रंगोली से सजाया जाता है।",
        "बाज़ार में सुबह से ही ताज़ी सब्ज़ियों और फलों की भीड़ लगी रहती है।",
        "बारिश के मौसम में गाँव के खेत हरे-भरे हो जाते हैं और किसान बहुत ख़ुश होते हैं।",
        "मेरे भाई ने इस साल विश्वविद्यालय में इतिहास की पढ़ाई शुरू की है।",
    )),
)

# The label a page declares for each codec: the name servers and authors wrote.
LABELS = {
    "cp1252": "windows-1252", "cp1250": "windows-1250", "iso8859_2": "iso-8859-2",
    "cp1251": "windows-1251", "koi8_r": "koi8-r", "koi8_u": "koi8-u", "iso8859_7": "iso-8859-7",
    "cp1253": "windows-1253", "cp1254": "windows-1254", "cp1255": "windows-1255", "cp1256": "windows-1256",
    "cp874": "windows-874", "tis_620": "TIS-620", "cp1257": "windows-1257", "gbk": "GBK",
    "gb18030": "GB18030", "big5": "Big5", "shift_jis": "Shift_JIS", "euc_jp": "EUC-JP", "euc_kr": "EUC-KR",
    "utf-8": "utf-8", "utf-8-sig": "utf-8", "utf-16-le": "utf-16", "utf-16-be": "utf-16",
}
BOMS = {"utf-8-sig": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}

DECLARATIONS = ("header", "meta", "http-equiv", "meta-late", "none")
SHORT_MIN = 150   # characters of prose in a short page, at least
SHORT_MAX = 600


def encodings(language: Language) -> tuple[str, ...]:
    """Every codec this language's pages are written in: its legacy code pages, UTF-8 and, for
    BOM_LANGUAGES, UTF-8 with a BOM and UTF-16 (both byte orders) with a BOM."""
    unicode = ("utf-8", "utf-8-sig", "utf-16-le", "utf-16-be") if language.code in BOM_LANGUAGES else UNICODE
    return language.legacy + unicode


def short_excerpts(sentences: tuple[str, ...]) -> list[str]:
    """Three runs of consecutive sentences (from the start, a third in, two thirds in; wrapping),
    each the shortest run of at least SHORT_MIN characters."""
    excerpts = []
    for start in (0, len(sentences) // 3, 2 * len(sentences) // 3):
        run: list[str] = []
        while sum(map(len, run)) + len(run) - 1 < SHORT_MIN and len(run) < len(sentences):
            run.append(sentences[(start + len(run)) % len(sentences)])
        excerpt = " ".join(run)
        assert SHORT_MIN <= len(excerpt) <= SHORT_MAX, excerpt
        excerpts.append(excerpt)
    return excerpts


def long_excerpt(sentences: tuple[str, ...]) -> str:
    return " ".join(sentences)


STYLE = """
body { font-family: Georgia, "Times New Roman", serif; margin: 0 auto; max-width: 42em; color: #222; }
header, footer { font-family: Helvetica, Arial, sans-serif; font-size: 0.9em; color: #555; }
nav ul { list-style: none; padding: 0; display: flex; gap: 1em; flex-wrap: wrap; }
nav a { color: #0645ad; text-decoration: none; } nav a:hover { text-decoration: underline; }
article p { line-height: 1.6; margin: 0 0 1em 0; } .byline { font-style: italic; color: #777; }
@media (max-width: 600px) { body { padding: 0 1em; } nav ul { flex-direction: column; } }
"""
SCRIPT = """
(function () {
  var links = document.querySelectorAll("nav a");
  for (var i = 0; i < links.length; i++) {
    links[i].addEventListener("click", function (event) { window.dataLayer = window.dataLayer || [];
      window.dataLayer.push({ event: "nav_click", target: event.target.getAttribute("href") }); });
  }
  document.documentElement.className = document.documentElement.className.replace("no-js", "js");
})();
"""


def page(excerpt: str, declaration: str, label: str, long: bool) -> str:
    """The HTML page for an excerpt, its charset declared as ``declaration`` says: in a ``<meta
    charset>``, a ``<meta http-equiv>``, a ``<meta charset>`` after more than 1 KiB of ``<head>``
    ("meta-late"), or not in the page ("header", "none")."""
    meta = {"meta": f'<meta charset="{label}">',
            "http-equiv": f'<meta http-equiv="Content-Type" content="text/html; charset={label}">'}
    early, late = meta.get(declaration, ""), f'<meta charset="{label}">' if declaration == "meta-late" else ""
    # Everything before a late <meta>: more than 1 KiB of head whatever the page's length.
    head = ('<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta property="og:type" content="article"><meta property="og:site_name" content="Daily">'
            '<meta name="twitter:card" content="summary_large_image">'
            '<link rel="preconnect" href="https://fonts.example.net" crossorigin>'
            '<link rel="alternate" type="application/rss+xml" title="RSS" href="/feed.xml">'
            '<link rel="stylesheet" href="/static/site.css?v=20240611">'
            f'<link rel="icon" href="/favicon.ico"><style>{STYLE}</style>')
    if long:
        head += f"<script>{SCRIPT}</script>"
    body = _long_body(excerpt) if long else f"<p>{excerpt}</p>"
    return (f'<!DOCTYPE html>\n<html class="no-js"><head>{early}<title>{_snippet(excerpt, 40)}</title>\n'
            f"{head}{late}</head>\n<body>{body}</body></html>\n")


def _long_body(excerpt: str) -> str:
    """A news page: navigation, a headline, a byline, the excerpt in paragraphs, a footer."""
    sentences = excerpt.split(" ")
    nav = "".join(f'<li><a href="/section/{i}.html">{_snippet(excerpt[i * 37:], 12)}</a></li>'
                  for i in range(1, 7))
    article = "".join(f"<p>{paragraph}</p>" for paragraph in _paragraphs(sentences))
    return (f'<header><nav><ul>{nav}</ul></nav></header>\n<article><h1>{_snippet(excerpt, 30)}</h1>'
            f'<p class="byline">{_snippet(excerpt[-25:], 25)}</p>\n{article}</article>\n'
            f'<footer><p>(c) 2024 <a href="/about.html">{_snippet(excerpt[60:], 12)}</a> | '
            f'<a href="/contact.html">{_snippet(excerpt[90:], 12)}</a></p></footer>')


def _snippet(text: str, size: int) -> str:
    """About ``size`` characters from the start of ``text``, cut after a word when the script
    has spaces."""
    cut = text[:size]
    if " " in cut.strip():
        cut = cut.rsplit(" ", 1)[0] if len(text) > size else cut
    return cut.strip(" .,:;!?¿¡“”«»()。，、")


def _paragraphs(words: list[str]) -> list[str]:
    """The words joined into paragraphs of about 250 characters."""
    paragraphs, current = [], ""
    for word in words:
        current = f"{current} {word}" if current else word
        if len(current) >= 250:
            paragraphs.append(current)
            current = ""
    return paragraphs + ([current] if current else [])
